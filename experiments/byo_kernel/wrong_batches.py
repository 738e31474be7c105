"""Deliberately wrong batched callables: each must FAIL (the harness judges every matrix of the batch)."""

import torch


def first_only(a, b, c, alpha=1.0, beta=0.0):
    """Computes matrix 0 only: the others keep the harness's NaN poison."""
    torch.mm(a[0], b[0], out_dtype=c.dtype, out=c[0])


def skips_last(a, b, c, alpha=1.0, beta=0.0):
    """Computes every matrix but the last."""
    torch.bmm(a[:-1], b[:-1], out_dtype=c.dtype, out=c[:-1])


def swaps(a, b, c, alpha=1.0, beta=0.0):
    """Writes matrix i's product into matrix batch-1-i's place."""
    torch.bmm(a.flip(0), b.flip(0), out_dtype=c.dtype, out=c)
