"""The FP8 library baseline: cuBLASLt's FP8 GEMM, reached through torch, with the contract's scales.

`library.cublaslt_fp8` runs FP8 contracts only: torch._scaled_mm (cuBLASLt) for per-tensor and per-row/column
scales, torch.nn.functional.scaled_mm with ScalingType.BlockWise1x128 (A) and BlockWise128x128 (B) for
DeepSeek-V3's block scales. `use_fast_accum` is the contract's fast_accum: a strict contract gets cuBLASLt's
FP32-promoting path, a `_fastacc` contract the tensor cores' own ~14-bit accumulation.

Hopper's FP8 tensor cores take K-major operands only (A row-major, B column-major: `tn`; torch checks it);
other layouts are a SKIP saying so: this row offers no timed transpose. Contracts torch cannot honour are
SKIP rows with the reason, never a silent stand-in.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import sys

from ..contracts.precision import Order, Scaling
from ..dtypes import DTYPE_INFO, DType
from .base import Implementation, Ok, Prepared, Skip, policy_output
from .registry import register_fixed


# cuBLASLt's block-scaled FP8 GEMM (1x128 x 128x128) finds no algorithm for an M that is not a multiple of 4: M = 1, 5,
# 130 refused, 4, 8, 16, 64, 256 taken, at N 256-1024 (torch 2.11, cuBLAS 13.0, an H100:
# experiments/studies/fp8/cublaslt_fp8_shape_probe.py, receipt gpu-tests/h100/new-rows-bc6bc52).
BLOCK_M_MULTIPLE = 4
# cuBLASLt's 128x128 block scales of B: the K-block dimension padded to a multiple of 4 in memory. torch 2.11 (H200)
# refused K = 4224 (33 k blocks): "scale_b must have shape 36 x 5 ..., got [33, 5]"; later releases check a [kb, nb]
# view with that padded stride instead (ScaledBlas.cpp's is_blockwise_128x128_scaling). block_scale_b_forms makes
# both, and the first launch (prepare, outside timing) keeps the one the installed torch takes.
BLOCK_K_MULTIPLE = 4


def block_scale_b_forms(scale_b) -> list:
    """B's block scales (kb x nb, logical) as cuBLASLt reads them: outer-dim-major (strides (1, L)), L = kb rounded up
    to BLOCK_K_MULTIPLE. Returns [the padded L x nb tensor, its first kb rows] (one tensor when kb needs no padding).
    The padding rows stand for k blocks past K, which hold no data: ones, never read into a product."""
    import torch

    kb, nb = scale_b.shape
    padded = -(-kb // BLOCK_K_MULTIPLE) * BLOCK_K_MULTIPLE
    full = torch.ones((nb, padded), dtype=scale_b.dtype, device=scale_b.device).t()  # L x nb, strides (1, L)
    full[:kb].copy_(scale_b)
    return [full] if padded == kb else [full, full[:kb]]


def first_accepted(forms: list, call):
    """The first of `forms` that `call(form)` runs with (torch refuses a scale layout it does not take with a
    RuntimeError); the last refusal, when none runs. A single form is returned untried: there is nothing to choose
    (and no launch in prepare where none was before)."""
    if len(forms) == 1:
        return forms[0]
    for i, form in enumerate(forms):
        try:
            call(form)
            return form
        except RuntimeError:
            if i == len(forms) - 1:
                raise


@functools.lru_cache(maxsize=None)
def has_blockwise() -> bool:
    """Whether torch offers torch.nn.functional.scaled_mm with ScalingType.BlockWise1x128/128x128. Asked of
    torch when it is loaded (a worker), read from the installed version otherwise (validate loads no torch)."""
    if "torch" in sys.modules:
        F = sys.modules["torch"].nn.functional
        kinds = getattr(F, "ScalingType", None)
        return hasattr(F, "scaled_mm") and all(hasattr(kinds, k) for k in ("BlockWise1x128", "BlockWise128x128"))
    try:
        major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", importlib.metadata.version("torch")).groups())
        return (major, minor) >= (2, 10)
    except (importlib.metadata.PackageNotFoundError, AttributeError, ValueError):
        return False


class CublasLtFp8(Implementation):
    family = "library"
    description = ("cuBLASLt FP8 GEMM via torch._scaled_mm (per tensor, per row/column) or "
                   "torch.nn.functional.scaled_mm (blockwise), with the contract's scales and fast-accumulation setting")
    min_cc = 89  # FP8 tensor cores: Ada (sm_89) and Hopper (sm_90)

    def __init__(self, variant: str = "cublaslt_fp8"):
        super().__init__(variant)

    def use_fast_accum(self, contract) -> bool:
        """What it asks cuBLASLt for: the contract's setting (tests/test_gpu_fp8.py overrides it in a canary)."""
        return contract.fast_accum

    def supports(self, problem, contract):
        if not contract.is_fp8:
            return Skip("FP8 contracts only (e4m3/e5m2 inputs with scales); library.cublas runs this contract")
        if problem.batch != 1:  # torch.compile of _scaled_mm (library.torch_compile_fp8) shares this rule
            return Skip("batched problems are not supported: torch._scaled_mm takes 2-D operands only (no batch), "
                        "and the contract's scales describe one matrix")
        if (contract.order_a, contract.order_b) != (Order.ROW, Order.COL):
            return Skip(f"cuBLASLt's FP8 GEMM on Hopper takes K-major operands only (tn: A row-major, B column-major); "
                        f"this contract is {contract.layout}, and this row offers no timed transpose")
        if contract.order_c is not Order.ROW:
            return Skip("torch._scaled_mm writes a row-major C")
        if contract.a is DType.E5M2 and contract.b is DType.E5M2:
            return Skip("cuBLASLt has no e5m2 x e5m2 FP8 GEMM (one operand must be e4m3)")
        if contract.alpha != 1.0:
            return Skip("alpha=1 only (torch._scaled_mm has no alpha; fold it into a scale)")
        if problem.k % 16 or problem.n % 16:
            return Skip(f"cuBLASLt FP8 needs k and n multiples of 16 (torch._scaled_mm's check); "
                        f"k={problem.k}, n={problem.n}")
        if contract.scaling is Scaling.ROWCOL and contract.c is not DType.BF16:
            return Skip(f"torch._scaled_mm's row-wise scaling writes bf16 only, not {contract.c.value}")
        if contract.scaling is Scaling.BLOCK:
            if not has_blockwise():
                return Skip("the installed torch has no torch.nn.functional.scaled_mm with "
                            "ScalingType.BlockWise1x128/BlockWise128x128 (blockwise FP8 needs torch 2.10+)")
            if contract.c is not DType.BF16:
                return Skip(f"blockwise scales with a bf16 output only here (the combination torch's tests use); "
                            f"{contract.c.value} output untried")
            if contract.fast_accum:  # what torch 2.11 answered on the H200 (experiments/studies/fp8/h200/)
                return Skip("cuBLASLt has no fast accumulation with 128x128 block scales (torch: \"scaled_gemm "
                            "doesn't support fast accum with 128x128 blockwise scaling\")")
            if not problem.is_grouped and problem.m % BLOCK_M_MULTIPLE:  # the grouped loop pads its groups
                return Skip(f"cuBLASLt's block-scaled FP8 GEMM takes M a multiple of {BLOCK_M_MULTIPLE} only (its "
                            f"heuristic finds no algorithm otherwise); M={problem.m}")
        return Ok()

    def contracts_summary(self):
        return ("FP8 only: e4m3 (or e4m3 x e5m2) in, tn, row-major C; per-tensor scales -> bf16/f16/f32, "
                "row/column and block scales -> bf16; fast accumulation as the contract says")

    def constraints_summary(self):
        return "k%16==0, n%16==0 (torch._scaled_mm)"

    def prepare(self, problem, contract, operands, extension):
        return _Fp8Prepared(problem, contract, operands, self.use_fast_accum(contract))


class _Fp8Prepared(Prepared):
    def __init__(self, problem, contract, operands, fast_accum: bool):
        import torch

        self.torch = torch  # kept, so that launch() (timed) does no import
        a, lda = operands.stored("a", Order.ROW)  # the storage policy's buffers, as every row gets them
        b, ldb = operands.stored("b", Order.COL)
        self.a, self.b = a, b.t()  # logical m x k row-major, k x n column-major: what cuBLASLt's FP8 path takes
        self.out_dtype = DTYPE_INFO[contract.c].torch_dtype
        self.fast_accum = fast_accum
        self.blockwise = contract.scaling is Scaling.BLOCK
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "copies_in_timing": []}
        scales = f"scales {contract.scaling.value}"
        if self.blockwise:
            # cuBLASLt reads block scales outer-dim-major: copies made here, outside timing, once; B's with its k
            # blocks padded to a multiple of 4 where K needs it, in the form the installed torch takes (one trial call)
            self.scale_a = operands.scale_a.t().contiguous().t()
            F = torch.nn.functional
            self.recipes = (F.ScalingType.BlockWise1x128, F.ScalingType.BlockWise128x128)
            self.scale_b = first_accepted(block_scale_b_forms(operands.scale_b), lambda sb: F.scaled_mm(
                self.a, self.b, self.scale_a, self.recipes[0], sb, self.recipes[1], output_dtype=self.out_dtype,
                use_fast_accum=fast_accum))
            self.out = None  # scaled_mm returns its own C
            self.storage_info["c"] = "torch.nn.functional.scaled_mm's own output tensor"
            self.notes = (f"torch.nn.functional.scaled_mm BlockWise1x128 x BlockWise128x128 (block scales copied "
                          f"outer-dim-major outside timing), use_fast_accum={fast_accum}, its own output")
        else:
            self.scale_a, self.scale_b = operands.scale_a, operands.scale_b
            self._out_full, self.out, self.storage_info["ldc"] = policy_output(problem, contract, a.device)
            self.notes = f"torch._scaled_mm, {scales}, use_fast_accum={fast_accum}"
        if fast_accum != contract.fast_accum:
            self.notes += (f"; CANARY: use_fast_accum={fast_accum} under a contract that says "
                           f"fast_accum={contract.fast_accum}")

    def launch(self):
        torch = self.torch
        if self.blockwise:
            self.out = torch.nn.functional.scaled_mm(self.a, self.b, self.scale_a, self.recipes[0], self.scale_b,
                                                     self.recipes[1], output_dtype=self.out_dtype,
                                                     use_fast_accum=self.fast_accum)
        else:
            torch._scaled_mm(self.a, self.b, scale_a=self.scale_a, scale_b=self.scale_b, out_dtype=self.out_dtype,
                             use_fast_accum=self.fast_accum, out=self.out)

    def poison(self):
        if self.blockwise:
            if self.out is not None:  # a fresh tensor each call: the poison shows only what a call leaves
                self.out.fill_(float("nan"))
        else:
            self._out_full.fill_(float("nan"))

    def output(self):
        return self.out


register_fixed("library.cublaslt_fp8", CublasLtFp8)
