"""Planted Python callables for tests/test_gpu_python.py: one correct, the rest each with one defect the
harness must catch (contract f16_f32acc_tn: a f16 (m, k) row-major, b f16 (k, n) column-major, c f32)."""

import torch

_cache = {}


def correct(a, b, c, alpha=1.0, beta=0.0):
    torch.mm(a, b, out_dtype=torch.float32, out=c)


def polls(a, b, c, alpha=1.0, beta=0.0):
    torch.mm(a, b, out_dtype=torch.float32, out=c)
    torch.cuda.current_stream().query()  # not capturable, but no wait: timed as direct calls, PASSES


def syncs(a, b, c, alpha=1.0, beta=0.0):
    torch.mm(a, b, out_dtype=torch.float32, out=c)
    torch.cuda.synchronize()  # not capturable, and every timed batch waits for the GPU: no valid sample


def raises(a, b, c, alpha=1.0, beta=0.0):
    scale = _scale_for(a)
    torch.mm(a, b, out_dtype=torch.float32, out=c)
    c.mul_(scale)


def _scale_for(a):
    raise ValueError(f"no scale for a {a.shape[0]}-row matrix")


def other_stream(a, b, c, alpha=1.0, beta=0.0):
    # from torch's high-priority pool: a plain torch.cuda.Stream() can be the harness's own stream (both
    # come from the same round-robin pool of 32)
    side = torch.cuda.Stream(priority=-1)
    with torch.cuda.stream(side):  # never joined with the harness's stream
        torch.cuda._sleep(20_000_000)
        torch.mm(a, b, out_dtype=torch.float32, out=c)


def writes_input(a, b, c, alpha=1.0, beta=0.0):
    torch.mm(a, b, out_dtype=torch.float32, out=c)
    b.zero_()  # b is the harness's column-major copy of B: caught, and restored for the rows after it


def cached(a, b, c, alpha=1.0, beta=0.0):
    key = tuple(c.shape)
    if key not in _cache:
        _cache[key] = torch.mm(a, b, out_dtype=torch.float32)
    c.copy_(_cache[key])  # the first inputs' result, whatever the inputs are now


def returns_new(a, b, c, alpha=1.0, beta=0.0):
    return torch.mm(a, b, out_dtype=torch.float32)


def scaled(a, b, c, alpha=1.0, beta=0.0):
    ab = alpha * torch.mm(a, b, out_dtype=torch.float32)
    c.copy_(ab + beta * c if beta != 0.0 else ab)  # with beta == 0, c holds the harness's NaN poison
