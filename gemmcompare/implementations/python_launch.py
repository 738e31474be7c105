"""Launching a GEMM from Python, under the same timing contract as a compiled kernel: what the `python` family
(python.py) and the Python library rows (python_library.py, python_fp8.py) share.

prepare makes one call outside any timed region (JIT compilation, autotuning; its seconds are the row's
build_seconds and a timing field), then captures one call in a CUDA graph; launches replay it, so the timed
region holds the GPU work the call enqueues and no Python. A call that cannot be captured (it queries a stream,
copies from pageable host memory, uses the legacy stream...) is timed as direct calls; `capture: never` asks for
that, `capture: required` makes a failed capture the row's CRASH. The row's note and timing["launch"]
("cuda_graph" or "direct", with timing["direct_because"]) say which. With direct calls each sample's events
bracket the call's GPU work; the harness keeps the launch queue full, and discards batches where Python fell
behind the GPU (a call that synchronizes every time has no valid sample).

A and B are handed as logical views (m x k, k x n) of the storage policy's buffers, with the contract's strides;
C (WritesC) is laid out as the policy lays out every row's C. A batched problem's are 3-D (batch x m x k, ...),
one matrix after the other in one allocation (operands.py).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..contracts.precision import Order
from .base import Prepared, policy_output, transposed
from .user_module import UserCodeError

# How long prepare waits for the first call's GPU work (a hung kernel becomes a TIMEOUT row, not a hang).
FIRST_CALL_TIMEOUT_S = 300.0

_FIRST_CALL_S: dict[tuple, float] = {}  # per process: the first call's seconds (JIT, autotuning) per row


def _logical(stored, order: Order):
    """The logical (rows x cols) view of an operand stored in `order` (a transposed view when column-major;
    batched, batch x rows x cols with each matrix transposed)."""
    return stored if order is Order.ROW else transposed(stored)


def _output(problem, contract, device):
    """C laid out as the storage policy lays out every row's C (leading dimension and zero padding; the same
    geometry library.torch_matmul writes into): (the whole allocation, C's logical m x n view, ldc)."""
    full, view, ldc = policy_output(problem, contract, device)
    return full, _logical(view, contract.order_c), ldc


def _first_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def capture_graph(call: Callable[[], None], stream):
    """One call captured in a CUDA graph on `stream`: (graph, "") or (None, why capture failed)."""
    import torch

    harness = torch.cuda.current_stream()
    graph = torch.cuda.CUDAGraph()
    first: list[BaseException] = []  # the call's own error: the one capture_end raises after it says less
    try:
        with torch.cuda.graph(graph, stream=stream):
            try:
                call()
            except Exception as exc:  # noqa: BLE001
                first.append(exc)
                raise
    except Exception as exc:  # noqa: BLE001 - a callable that cannot be captured is timed directly
        why = _first_line(first[0] if first else exc)
        torch.cuda.set_stream(harness)  # torch.cuda.graph leaves its stream current when capture_end raises
        torch.cuda.synchronize()  # a failed capture leaves the context usable; if it did not, this raises
        return None, why
    finally:
        torch.cuda.set_stream(harness)
    return graph, ""


class PythonLaunch(Prepared):
    """What the Python rows share: A and B as logical views with the contract's strides, a first call
    outside any timed region, and launches that replay a CUDA graph of one call when it could be captured."""

    first_call_name = "first_call_s"  # its name in the row's timing fields
    first_call_label = "first call"
    first_call_what = "JIT compilation, autotuning"

    def __init__(self, label: str, problem, contract, operands):
        self.label, self.problem, self.contract, self.operands = label, problem, contract, operands
        a, lda = operands.stored("a", contract.order_a)  # the storage policy's buffers, as every row gets them
        b, ldb = operands.stored("b", contract.order_b)
        self.a, self.b = _logical(a, contract.order_a), _logical(b, contract.order_b)
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": None,
                             "copies_in_timing": []}
        self.graph = None
        self.timing_fields: dict[str, Any] = {}
        self.build_seconds: float | None = None

    def call(self) -> None:
        """One launch: the Python function itself."""
        raise NotImplementedError

    def first_call(self) -> None:
        """The first call of a row in this process (where compilation happens); a hook for torch_compile."""
        self.call()

    def settle(self, capture: str, key: tuple) -> None:
        """The first call (on a side stream, waited for with a timeout), then the capture. `key` names the
        row's problem: the first call's seconds are recorded once per key and process."""
        import torch

        first = self.first_call if key not in _FIRST_CALL_S else self.call
        if not self.a.is_cuda:  # CPU tensors (tests): no streams, no graphs
            t0 = time.perf_counter()
            first()
            self._record(key, time.perf_counter() - t0, "direct", "no CUDA device", capture)
            return
        from ..contracts.timing import wait_stream

        harness = torch.cuda.current_stream()
        side = torch.cuda.Stream()  # warm-up and capture on one stream, as torch recommends for graphs
        side.wait_stream(harness)
        with torch.cuda.stream(side):
            t0 = time.perf_counter()
            first()
            wait_stream(FIRST_CALL_TIMEOUT_S, self.label)
            seconds = time.perf_counter() - t0
        why = "capture: never"
        if capture != "never":
            self.graph, why = capture_graph(self.call, side)
            if self.graph is None and capture == "required":
                raise UserCodeError(f"CUDA graph capture failed (capture: required): {why}")
        harness.wait_stream(side)
        self._record(key, seconds, "cuda_graph" if self.graph is not None else "direct", why, capture)

    def _record(self, key: tuple, seconds: float, launch: str, why: str, capture: str) -> None:
        first = _FIRST_CALL_S.setdefault(key, seconds)
        self.build_seconds = first
        self.timing_fields = {"launch": launch, "capture": capture, self.first_call_name: first}
        if launch == "cuda_graph":
            how = ("timed as replays of a CUDA graph of one call, captured in prepare: the GPU work the call "
                   "enqueues, no Python in the timed region")
        else:
            self.timing_fields["direct_because"] = why
            how = (f"timed as direct calls of the Python function ({why}): the launch queue is kept full, so "
                   f"samples hold the GPU work (batches where Python fell behind the GPU are discarded)")
        self.notes = f"{how}; {self.first_call_label} {first:.2f} s ({self.first_call_what}), outside timing"

    def launch(self) -> None:
        if self.graph is not None and not _capturing():
            self.graph.replay()
        else:  # no graph, or the timer is capturing its own (timing.graph: true)
            self.call()


def _capturing() -> bool:
    import torch

    return torch.cuda.is_current_stream_capturing()



class WritesC(PythonLaunch):
    """A launch that writes into the harness's C (the user's callable, the Triton GEMM)."""

    def __init__(self, label, problem, contract, operands):
        super().__init__(label, problem, contract, operands)
        self.c_store, self.c, self.storage_info["ldc"] = _output(problem, contract, self.a.device)
        self.alpha, self.beta = float(contract.alpha), float(contract.beta)
        self.reset_output()

    def output(self):
        return self.c

    def poison(self):
        self.c_store.fill_(float("nan"))
        self.reset_output()

    def reset_output(self):
        if self.beta != 0.0 and self.operands.c0 is not None:
            self.c.copy_(self.operands.c0)

