"""The `python` family: a user's Python callable named in a spec (paths relative to the spec's folder), under
the same contracts as every compiled kernel:

      - python: {name: my_matmul, callable: "my_kernels.py:matmul", contract: f16_f32acc_tn}

The library rows that also run Python (library.triton_matmul, library.torch_compile) are in python_library.py,
their FP8 twins in python_fp8.py; reading and importing the user's module is user_module.py, the first call
and the CUDA-graph launches python_launch.py.

The calling convention of a `python` callable. For each launch the harness calls

    fn(a, b, c, alpha=alpha, beta=beta)

with torch's current stream set to the harness's stream; fn enqueues C = alpha * A @ B + beta * C on that
stream and returns without synchronizing:
- a: torch.Tensor of shape (m, k), the contract's A dtype, on the GPU. Row-major, strides (k, 1), when the
  contract's layout letter for A is `t`; column-major, strides (1, m) (a transposed view of a contiguous
  k x m tensor), when it is `n`.
- b: shape (k, n), B's dtype: strides (n, 1) for `t`, (1, k) for `n`.
- c: shape (m, n), C's dtype, row-major, strides (n, 1) (strides (1, m) under a `_ccol` contract). The
  result goes into it. When beta != 0 it holds C0 on entry; when beta == 0 it holds NaN (the harness
  poisons C before checking launches), so do not read it then. fn returns None (returning c is fine too).
- alpha, beta: Python floats. They are 1.0 and 0.0 unless the entry says `alpha_beta: true`; without it, a
  contract with other values is a SKIP.
- Batched problems (`batch: B` in the spec, B > 1): a, b and c are 3-D, (B, m, k), (B, k, n) and (B, m, n), each
  matrix laid out as above and the matrices one after the other in one allocation: a row-major A has strides
  (m*k, k, 1), a column-major one (m*k, 1, m) (under `aligned` storage the batch stride is one padded matrix).
  Matrix i of c is a[i] @ b[i]; torch.bmm(a, b, out=c) is one such callable. Every matrix is checked.
a and b are the inputs every implementation shares: writing into them fails the row. One prepared problem
passes the same tensors at every launch. The entry's `contract` (a built-in name) says which dtypes and
layout the callable implements; other contracts are SKIP rows.

Grouped problems (docs/grouped.md), for an entry that says `grouped: true` (without it a grouped problem is a
SKIP: a dense callable would read the stacked rows as one matrix). The call adds two keywords:

    fn(a, b, c, alpha=alpha, beta=beta, m_offsets=m_offsets, masked_counts=masked_counts)

- contiguous layout: a is (sum M, k) row-major, every group's rows stacked; b is (groups, k, n), each weight
  column-major (a transposed view of a contiguous groups x n x k tensor: K-major); c is (sum M, n). m_offsets is
  an int32 device tensor of groups + 1 cumulative Ms from 0: group g is rows m_offsets[g] .. m_offsets[g+1] of
  a and c, and c[those rows] = a[those rows] @ b[g]. masked_counts is None.
- masked layout: a is (groups, capacity, k), c (groups, capacity, n); masked_counts is an int32 device tensor of
  each group's M: c[g, :M_g] = a[g, :M_g] @ b[g]; rows M_g.. are padding (a's hold NaN; c's must be left as
  they are, or written with what those NaN rows give). m_offsets is given too.
Groups may be empty (M = 0). Under FP8, scale_a and scale_b are per group (docs/grouped.md gives the shapes).

FP8. Under an FP8 contract the call is

    fn(a, b, c, alpha=alpha, beta=beta, scale_a=scale_a, scale_b=scale_b)

with a and b the FP8 values and scale_a, scale_b the contract's FP32 dequantization scales (A ~= a * scale_a),
the very tensors every FP8 row reads, in the logical shapes of contracts/quantize.py: (1, 1) and (1, 1) per
tensor, (m, 1) and (1, n) per row/column, (m, ceil(k/128)) and (ceil(k/128), ceil(n/128)) per block. The
entry declares the shapes it applies (`scalings: [tensor, rowcol]`) and how it accumulates (`accumulation:
promote | fast`), as a custom kernel does (fp8_declaration.py); an FP8 contract with none declared is a SKIP.

Checks. At validation the module is read, never run (ast): a missing file, a syntax error, no top-level
binding of the name, a binding that cannot be called (a constant, a class, an `async def`, a Triton
`@triton.jit` kernel) and a `def` or lambda whose signature cannot take the call above are spec errors.
Inside the measuring worker the module is imported (once per worker process: a fresh import after a
crash), and what the source alone could not tell (decorated or imported functions) is checked with
inspect.signature. An exception at import or in the call is that row's CRASH, told by the last frame in the
user's file; a crash of the process is a CRASH and a hang a TIMEOUT (the worker is replaced).

Timing. prepare calls fn once outside any timed region (JIT compilation, autotuning; its seconds are the
row's build_seconds and timing["first_call_s"]), then captures one call in a CUDA graph; launches replay
it, so the timed region holds the GPU work fn enqueues and no Python. A callable that cannot be captured
(it queries a stream, copies from pageable host memory, uses the legacy stream...) is timed as direct calls; `capture:
never` asks for that, `capture: required` makes a failed capture the row's CRASH. The row's note and
timing["launch"] ("cuda_graph" or "direct", with timing["direct_because"]) say which. With direct calls
each sample's events bracket the call's GPU work; the harness keeps the launch queue full, and discards
batches where Python fell behind the GPU (a callable that synchronizes in every call has no valid sample).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..contracts.precision import BUILTIN_CONTRACTS, Epilogue
from .base import Constraints, Implementation, Param, Skip, format_params
from .fp8_declaration import ACCUMULATIONS, check_scalings, declared_fp8, describe, fp8_support, same_types_and_layout
from .python_launch import WritesC
from .registry import Parametrized, register_parametrized
# the user's module as this family meets it (import_module re-exported for its callers)
from .user_module import (UserCodeError, check_source, describe_exception, import_module,  # noqa: F401
                          load_callable, shown)

CAPTURE_MODES = ("auto", "never", "required")
CONSTRAINT_KEYS = ("m_multiple_of", "n_multiple_of", "k_multiple_of", "index_bits")


def _constraints(raw) -> Constraints:
    cons = dict(raw or ())
    unknown = set(cons) - set(CONSTRAINT_KEYS)
    if unknown:
        raise ValueError(f"constraints: unknown keys {sorted(unknown)}; expected {', '.join(CONSTRAINT_KEYS)}")
    for key, value in cons.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"constraints.{key} must be a positive integer, got {value!r}")
    if cons.get("index_bits", 32) not in (32, 64):
        raise ValueError(f"constraints.index_bits must be 32 or 64, got {cons['index_bits']}")
    return Constraints(**cons)


class PythonCallable(Implementation):
    family = "python"
    description = "a user's Python callable (Triton, torch, ...), called with the harness's tensors"

    def __init__(self, params: dict):
        value = params["callable"]
        if not value:
            raise ValueError("callable: name the function as 'file.py:function' (the file relative to the spec)")
        path_text, _, func = value.rpartition(":")
        path = Path(path_text)
        name = params["name"] or func
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"name must be an identifier (letters, digits, '_'), got {name!r}")
        contract_name = params["contract"]
        if not contract_name:
            raise ValueError("contract: name the built-in contract the callable implements, e.g. f16_f32acc_tn "
                             "(see `gemmcompare list --contracts`)")
        if contract_name not in BUILTIN_CONTRACTS:
            from difflib import get_close_matches

            near = get_close_matches(str(contract_name), list(BUILTIN_CONTRACTS), n=1)
            raise ValueError(f"contract {contract_name!r} is not a built-in contract"
                             + (f" (did you mean {near[0]!r}?)" if near else " (see `gemmcompare list --contracts`)"))
        declared = BUILTIN_CONTRACTS[contract_name]
        if declared.epilogue is not Epilogue.NONE:
            raise ValueError(f"contract {contract_name}: a Python callable is given no bias vector, so contracts "
                             f"with an epilogue are not offered")
        self.scalings, self.fast_accum = declared_fp8(declared, params["scalings"], params["accumulation"])
        # a callable declared for an FP8 contract is only ever called with the scales (or, with no scalings
        # declared, not at all: SKIP rows)
        self.takes_scales = declared.is_fp8
        # grouped: true: it takes grouped problems, called with m_offsets= and masked_counts= (its FP8 path, if
        # declared, with the per-group scales)
        self.takes_grouped = self.grouped_fp8 = bool(params["grouped"])
        problem = check_source(path, func, self.takes_scales, self.takes_grouped)
        if problem:
            raise ValueError(problem)
        self.constraints = _constraints(params["constraints"])
        capture = params["capture"]
        super().__init__(name, {"capture": capture} if capture != "auto" else {})
        self.path, self.func, self.capture = str(path), func, capture
        self.contract_name, self.alpha_beta = contract_name, bool(params["alpha_beta"])

    @property
    def name(self) -> str:
        return f"python.{self.variant}" + (f"[{format_params(self.params)}]" if self.params else "")

    def supports(self, problem, contract):
        # storage is the harness's policy, not the callable's: its tensors carry the policy's strides, which a
        # callable that reads through strides (torch, Triton) honours under either (docs/storage.md)
        if not same_types_and_layout(contract, BUILTIN_CONTRACTS[self.contract_name]):
            return Skip(f"declared contract is {self.contract_name}")
        fp8 = fp8_support(contract, self.scalings, self.fast_accum)
        if not fp8:
            return fp8
        if not self.alpha_beta and (contract.alpha != 1.0 or contract.beta != 0.0):
            return Skip("only alpha=1, beta=0 (say `alpha_beta: true` when the callable honours them)")
        if problem.batch != 1 and contract.is_fp8:  # one scale tensor per operand, not one per matrix
            return Skip("batched FP8 problems are not offered: the contract's scales describe one matrix")
        return self.constraints.check(problem)

    def contracts_summary(self):
        return f"{self.contract_name} (declared){describe(self.scalings, self.fast_accum)}"

    def constraints_summary(self):
        return self.constraints.summary()

    def prepare(self, problem, contract, operands, extension):
        return _CallablePrepared(self, problem, contract, operands)


class _CallablePrepared(WritesC):
    def __init__(self, impl: PythonCallable, problem, contract, operands):
        import torch

        super().__init__(impl.name, problem, contract, operands)
        self.impl, self._tensor = impl, torch.Tensor
        self.fn = load_callable(impl.path, impl.func, impl.takes_scales, impl.takes_grouped)
        # FP8: the contract's own scale tensors, read by the callable inside its launch (no host copy)
        self.scales = {"scale_a": operands.scale_a, "scale_b": operands.scale_b} if contract.is_fp8 else {}
        # grouped: the group offsets (and masked counts), device inputs like the operands
        self.groups = ({"m_offsets": operands.m_offsets, "masked_counts": operands.masked_counts}
                       if problem.is_grouped else {})
        self.settle(impl.capture, (impl.name, problem, contract.name))
        digest = hashlib.sha256(Path(impl.path).read_bytes()).hexdigest()[:12]
        self.notes = f"{shown(impl.path)}:{impl.func} (sha256 {digest}); {self.notes}"

    def call(self):
        try:
            result = self.fn(self.a, self.b, self.c, alpha=self.alpha, beta=self.beta, **self.scales, **self.groups)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's failure is their row's CRASH
            raise UserCodeError(describe_exception(exc, self.impl.path, f"{self.impl.func}()")) from exc
        if isinstance(result, self._tensor) and result.data_ptr() != self.c.data_ptr():
            raise UserCodeError(f"{self.impl.func}() returned a new tensor: write the result into c (the third "
                                f"argument) instead; the harness reads c")


register_parametrized(Parametrized(
    name="python",
    description="a user's Python callable fn(a, b, c, alpha=, beta=) that writes C on the current stream",
    params=[
        Param("callable", "callable", None, help="'file.py:function', the file relative to the spec's folder"),
        Param("name", "str", None, help="identifier; the implementation is python.<name> (default: the function's name)"),
        Param("contract", "str", None, help="the built-in precision contract the callable implements"),
        Param("capture", "choice", "auto", choices=CAPTURE_MODES,
              help="auto: time CUDA-graph replays when one call can be captured, else direct calls"),
        Param("alpha_beta", "choice", False, choices=(False, True), help="the callable honours alpha != 1 and beta != 0"),
        Param("constraints", "mapping", (), help="{m_multiple_of, n_multiple_of, k_multiple_of, index_bits}"),
        Param("scalings", "list", (), validate=check_scalings,
              help="FP8: the scale shapes it applies (of tensor, rowcol, block); it is called with scale_a=, scale_b="),
        Param("grouped", "choice", False, choices=(False, True),
              help="it takes grouped problems: called with m_offsets= and masked_counts= (docs/grouped.md)"),
        Param("accumulation", "choice", None, choices=ACCUMULATIONS,
              help="FP8: promote (FP32 sums, or partial sums promoted every <= 128 of K; default) or fast"),
    ],
    factory=PythonCallable,
))
