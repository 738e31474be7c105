"""Library baselines: cuBLAS through an explicit cublasGemmEx call, and torch.matmul as torch runs it.
A batched problem is one cublasGemmStridedBatchedEx call, and torch.bmm on the 3-D operands.

`library.cublas` runs the contract exactly: the compute type is the contract's accumulator (FP16 in,
FP32 out -> CUBLAS_COMPUTE_32F), default math with reduced-precision reductions disallowed, TF32 only
under a tf32 contract. `library.torch_matmul` is labelled with the contract it really runs: torch.mm
returns its input dtype (FP16 in gives FP16 out), or FP32 through `out_dtype` where torch offers it;
contracts it cannot honour are SKIP rows saying why, never a silent stand-in.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import warnings

from ..paths import EXTENSIONS_DIR
from ..build.request import KernelSource
from ..contracts.precision import Epilogue, Math, Order
from ..dtypes import FP8_DTYPES, DType
from .base import AbiKernel, Constraints, ContractSupport, Implementation, Ok, Prepared, Skip, policy_output, transposed
from .registry import register_fixed

ALL = frozenset(DType) - FP8_DTYPES  # FP8 needs scales: library.cublaslt_fp8 (fp8.py)
FP8_HINT = "FP8 inputs need their scales: library.cublaslt_fp8 runs FP8 contracts (cuBLASLt through torch._scaled_mm)"


class CublasGemmEx(AbiKernel):
    family = "library"
    description = "cublasGemmEx, compute type fixed by the contract (CUBLAS_COMPUTE_32F for FP32 accumulation)"
    build_group = "library_cublas"
    entry_symbol = "gc_library_cublas"
    kernel_filter = r"^$"  # cuBLAS kernels are not ours to report
    contract_support = ContractSupport(
        inputs=ALL, outputs=ALL, accumulators=frozenset({DType.F32, DType.F16, DType.F64}),
        maths=frozenset(Math), alpha_beta=True,
    )
    constraints = Constraints(index_bits=32)  # cublasGemmEx takes int dimensions and leading dimensions
    include_dirs = (str(EXTENSIONS_DIR),)  # "library/cublas_common.h"
    batched = True  # batch > 1: cublasGemmStridedBatchedEx with the harness's batch strides (cublas_gemm.cpp)

    def __init__(self):
        super().__init__("cublas")

    def sources(self):
        return (KernelSource("cublas_gemm.cpp", path=EXTENSIONS_DIR / "library" / "cublas_gemm.cpp"),)

    def supports(self, problem, contract):
        if contract.is_fp8:
            return Skip(f"cublasGemmEx has no FP8 path; {FP8_HINT}")
        s = super().supports(problem, contract)
        if not s:
            return s
        a, c, acc = contract.a, contract.c, contract.acc
        if contract.math is Math.TF32 and a is not DType.F32:
            return Skip("TF32 math applies to FP32 inputs only")
        if acc is DType.F16 and not (a is DType.F16 and c is DType.F16):
            return Skip("CUBLAS_COMPUTE_16F takes FP16 inputs and output only")
        if acc is DType.F64 and not (a is DType.F64 and c is DType.F64):
            return Skip("CUBLAS_COMPUTE_64F takes FP64 inputs and output only")
        if acc is DType.F32 and a is DType.F64:
            return Skip("FP64 inputs need an FP64 accumulator")
        if acc is DType.F32 and c not in (a, DType.F32):
            return Skip(f"cublasGemmEx has no {a.value} -> {c.value} path with FP32 compute")
        return Ok()

    def contracts_summary(self):
        return "any dtype pairing cublasGemmEx offers (out = in or f32; acc f32, f16 for all-f16, f64 for all-f64), tf32 for f32, all layouts, alpha/beta"


class TorchMatmul(Implementation):
    family = "library"
    description = ("torch.mm (torch.bmm for a batched problem) as torch runs it: output in the input dtype (or FP32 "
                   "via out_dtype), FP32 accumulation")

    def __init__(self):
        super().__init__("torch_matmul")

    def supports(self, problem, contract):
        if contract.is_fp8:
            return Skip(f"torch.mm takes no FP8 inputs; {FP8_HINT}")
        if contract.a != contract.b or contract.a not in (DType.F16, DType.BF16, DType.F32):
            return Skip(f"inputs {contract.a.value}/{contract.b.value}: torch.mm here takes matching f16, bf16 or f32")
        if contract.acc is not DType.F32:
            return Skip(f"torch.mm accumulates in f32, not {contract.acc.value}")
        if contract.c is not contract.a and not (contract.c is DType.F32 and has_out_dtype()):
            return Skip(f"torch.mm on {contract.a.value} inputs returns {contract.a.value}, not {contract.c.value}"
                        f" (use the {contract.a.value}_{contract.a.value}out_f32acc_* contract)")
        if contract.math is Math.TF32 and contract.a is not DType.F32:
            return Skip("TF32 math applies to FP32 inputs only")
        if contract.order_c is not Order.ROW:
            return Skip("torch.mm writes a row-major output")
        if contract.alpha != 1.0 or contract.beta != 0.0 or contract.epilogue is not Epilogue.NONE:
            return Skip("torch.mm computes A @ B only (alpha=1, beta=0, no epilogue)")
        return Ok()

    def contracts_summary(self):
        return "f16/bf16/f32 in -> same dtype out (f32 out via out_dtype), acc f32, strict or tf32, any A/B order, row-major C"

    def prepare(self, problem, contract, operands, extension):
        return _TorchPrepared(problem, contract, operands)


@functools.lru_cache(maxsize=None)
def has_out_dtype() -> bool:
    """torch.mm(..., out_dtype=) exists for CUDA in recent torch (2.8+). Read from the installed version, so
    that validating a spec does not import torch; asked of torch itself only when the version is unclear."""
    try:
        major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", importlib.metadata.version("torch")).groups())
        return (major, minor) >= (2, 8)
    except (importlib.metadata.PackageNotFoundError, AttributeError, ValueError):
        pass
    try:
        import torch

        return "dtype_out" in torch.ops.aten.mm.overloads()
    except Exception:  # noqa: BLE001
        return False


class _TorchPrepared(Prepared):
    def __init__(self, problem, contract, operands):
        import torch

        self.torch = torch  # kept, so that launch() (timed) does no import
        self.contract = contract
        a, lda = operands.stored("a", contract.order_a)  # the storage policy's buffers, as every row gets them
        b, ldb = operands.stored("b", contract.order_b)
        self.a = a if contract.order_a is Order.ROW else transposed(a)  # logical views, no copies at launch
        self.b = b if contract.order_b is Order.ROW else transposed(b)
        # batched operands are batch x rows x cols: torch.bmm, which takes the same out_dtype and out
        self.mm = torch.bmm if problem.batch != 1 else torch.mm
        self._out_full, self.out, ldc = policy_output(problem, contract, a.device)  # supports(): C row-major
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": ldc,
                             "copies_in_timing": []}
        self.tf32 = contract.math is Math.TF32
        self.widen = contract.c is not contract.a  # f16/bf16 -> f32 through out_dtype
        self.notes = (f"{self.mm.__name__} with allow_tf32={self.tf32}, reduced-precision reductions off"
                      + (", out_dtype=float32" if self.widen else ""))

    def _flags(self):
        m = self.torch.backends.cuda.matmul
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.allow_tf32 = self.tf32
        m.allow_fp16_reduced_precision_reduction = False
        m.allow_bf16_reduced_precision_reduction = False

    def launch(self):
        torch = self.torch
        self._flags()
        if self.widen:
            self.mm(self.a, self.b, out_dtype=torch.float32, out=self.out)
        else:
            self.mm(self.a, self.b, out=self.out)

    def poison(self):
        self._out_full.fill_(float("nan"))

    def output(self):
        return self.out


register_fixed("library.cublas", CublasGemmEx)
register_fixed("library.torch_matmul", TorchMatmul)
