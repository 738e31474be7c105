"""The Python FP8 rows, beside library.cublaslt_fp8: FP8 contracts only (a SKIP under every other one).

- `library.triton_fp8`: gemmcompare's Triton FP8 GEMM (triton_fp8_kernels.py), e4m3 in, tn, per-tensor or
  row/column scales read from their device tensors inside the launch, bf16/f16/f32 out. Its configuration list
  is triton_fp8_configs.py: the plain row is autotuned over it by Triton in prepare; `{config: NAME}` runs one
  entry; `{config: auto}` (or `tune: auto`) is a tuned row whose candidates, one per entry, the harness checks
  and races per problem (gemmcompare/tuning). The contract's fast_accum picks the accumulation: strict
  contracts get partial sums promoted to FP32 every BLOCK_K (<= 128) of K (tl.dot's max_num_imprecise_acc),
  `_fastacc` ones Triton's Hopper default, the wgmma accumulator over all of K. Block scales are a SKIP.
- `library.torch_compile_fp8`: torch.compile (as library.torch_compile) of torch._scaled_mm with the
  contract's scales, out_dtype and use_fast_accum; inductor chooses between cuBLASLt (ATen) and its own
  Triton templates (which keep FP32 partial sums per BLOCK_K unless use_fast_accum). Per-tensor and
  row/column scales, as library.cublaslt_fp8 passes them; block scales are a SKIP.
"""

from __future__ import annotations

from ..contracts.precision import Order, Scaling
from ..dtypes import DTYPE_INFO, DType
from .base import Constraints, Implementation, Param, Skip
from .library_fp8 import CublasLtFp8
from .python_launch import WritesC
from .python_library import COMPILE_MODE, CompiledPrepared, fresh_function, has_module
from .registry import InvalidConfig, Parametrized, register_fixed, register_parametrized
from .triton_fp8_configs import BY_NAME, NAMES, TritonFp8Config


def _not_fp8(same_for_others: str) -> Skip:
    return Skip(f"FP8 contracts only (e4m3/e5m2 inputs with scales); {same_for_others} runs this contract")


def _canary_note(fast_accum: bool, contract) -> str:
    if fast_accum == contract.fast_accum:
        return ""
    return f"; CANARY: fast accumulation {fast_accum} under a contract that says fast_accum={contract.fast_accum}"


class TritonFp8(Implementation):
    family = "library"
    description = ("gemmcompare's Triton FP8 GEMM (e4m3 tl.dot, scales read on the device in the epilogue), "
                   "FP32 promotion every BLOCK_K unless the contract allows fast accumulation; autotuned in prepare")
    min_cc = 90  # max_num_imprecise_acc steers Hopper's wgmma: elsewhere the accumulation is not what is said here
    # what its code is (the pick cache's key for a tuned row of its configurations: runner/picking.py)
    code_modules = ("python_fp8", "triton_fp8_kernels", "triton_fp8_configs", "triton_tile")

    def __init__(self, config: TritonFp8Config | None = None):
        # no parameters for the autotuned row: its name stays `library.triton_fp8`
        super().__init__("triton_fp8", {"config": config.name} if config else {})
        self.config = config
        if config is not None:
            self.description = (f"gemmcompare's Triton FP8 GEMM with one configuration of its list, {config.name} "
                                f"(BLOCK_MxNxK, num_warps, num_stages, GROUP_M), compiled in prepare")

    def use_fast_accum(self, contract) -> bool:
        """The contract's setting (tests/test_gpu_fp8_python.py overrides it in a canary)."""
        return contract.fast_accum

    def supports(self, problem, contract):
        if not has_module("triton"):
            return Skip("triton is not installed")
        if not contract.is_fp8:
            return _not_fp8("library.triton_matmul")
        if (contract.a, contract.b) != (DType.E4M3, DType.E4M3):
            return Skip(f"inputs {contract.a.value}/{contract.b.value}: the Triton FP8 GEMM takes e4m3 only "
                        f"(e5m2 untried)")
        if (contract.order_a, contract.order_b) != (Order.ROW, Order.COL):
            return Skip(f"Hopper's FP8 tensor cores take K-major operands only (tn: A row-major, B column-major); "
                        f"this contract is {contract.layout}, and this row offers no timed transpose")
        if contract.scaling is Scaling.BLOCK:
            return Skip("block scales (1x128 A, 128x128 B) change along K: they need a scaled partial sum per "
                        "128 of K in the main loop, not built here (library.cublaslt_fp8 runs them)")
        if problem.batch != 1:
            return Skip("batched problems are not supported: the Triton FP8 GEMM's grid has no batch axis, and the "
                        "contract's scales describe one matrix")
        return Constraints(index_bits=32).check(problem)  # the kernel's offsets are 32-bit products

    def contracts_summary(self):
        return ("FP8 only: e4m3 in, tn, per-tensor or row/column scales, bf16/f16/f32 out, alpha; strict: FP32 "
                "promotion every BLOCK_K (<= 128), _fastacc: no promotion (Triton's sm_90 default)")

    def constraints_summary(self):
        return "32-bit indices"

    def prepare(self, problem, contract, operands, extension):
        if self.config is not None:
            return _FixedTritonFp8Prepared(self.name, problem, contract, operands, self.use_fast_accum(contract),
                                           self.config)
        return _TritonFp8Prepared(self.name, problem, contract, operands, self.use_fast_accum(contract))


class _TritonFp8Prepared(WritesC):
    first_call_name = "autotune_s"
    first_call_label = "autotuning"
    first_call_what = "Triton compilation and benchmarking every configuration"

    def __init__(self, label, problem, contract, operands, fast_accum: bool):
        super().__init__(label, problem, contract, operands)
        from . import triton_fp8_kernels

        self.kernels, self.fast_accum = triton_fp8_kernels, fast_accum
        self.scale_a, self.scale_b = operands.scale_a, operands.scale_b  # read by the kernel: no host copy
        self.rowcol = contract.scaling is Scaling.ROWCOL
        self.settle("auto", (label, problem, contract.name, fast_accum))
        chosen = triton_fp8_kernels.describe(triton_fp8_kernels.fp8_matmul_autotuned.best_config)
        self.timing_fields["triton_config"] = chosen
        accumulation = ("fast accumulation (no promotion)" if fast_accum else
                        "partial sums promoted to FP32 every BLOCK_K (max_num_imprecise_acc=BLOCK_K)")
        self.notes += (f"; scales {contract.scaling.value} read on the device; {accumulation}; autotuned over "
                       f"{len(triton_fp8_kernels.CONFIGS)} configurations in prepare, outside timing: chose {chosen}"
                       + _canary_note(fast_accum, contract))

    def call(self):
        self.kernels.launch(self.a, self.b, self.c, self.scale_a, self.scale_b, self.alpha, self.rowcol,
                            self.fast_accum)


class _FixedTritonFp8Prepared(WritesC):
    """One configuration of the list: compiled by the first call, in prepare, outside timing."""

    first_call_name = "compile_s"
    first_call_label = "compilation"
    first_call_what = "Triton compilation of this configuration"

    def __init__(self, label, problem, contract, operands, fast_accum: bool, config: TritonFp8Config):
        super().__init__(label, problem, contract, operands)
        from . import triton_fp8_kernels

        self.kernels, self.fast_accum, self.config = triton_fp8_kernels, fast_accum, config
        self.scale_a, self.scale_b = operands.scale_a, operands.scale_b
        self.rowcol = contract.scaling is Scaling.ROWCOL
        self.settle("auto", (label, problem, contract.name, fast_accum))
        self.timing_fields["triton_config"] = config.name
        accumulation = ("fast accumulation (no promotion)" if fast_accum else
                        f"partial sums promoted to FP32 every BLOCK_K = {config.block_k}")
        self.notes += (f"; scales {contract.scaling.value} read on the device; {accumulation}; configuration "
                       f"{config.name} (num_warps {config.warps}, num_stages {config.stages}, GROUP_M "
                       f"{config.group_m})" + _canary_note(fast_accum, contract))

    def call(self):
        self.kernels.launch(self.a, self.b, self.c, self.scale_a, self.scale_b, self.alpha, self.rowcol,
                            self.fast_accum, self.config)


def scaled_mm_function(out_dtype, fast_accum: bool):
    """torch._scaled_mm with the contract's output dtype and fast-accumulation setting, and its text."""
    import torch

    def gemm(a, b, scale_a, scale_b):
        return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype,
                                use_fast_accum=fast_accum)
    text = (f"torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype={out_dtype}, "
            f"use_fast_accum={fast_accum})")
    return fresh_function(gemm), text


class TorchCompileFp8(Implementation):
    family = "library"
    description = (f'torch.compile(mode="{COMPILE_MODE}") of torch._scaled_mm with the contract\'s scales, output '
                   f"dtype and use_fast_accum; compile time recorded apart")
    min_cc = 89  # FP8 tensor cores, as library.cublaslt_fp8

    def __init__(self):
        super().__init__("torch_compile_fp8")

    def use_fast_accum(self, contract) -> bool:
        """The contract's setting (tests/test_gpu_fp8_python.py overrides it in a canary)."""
        return contract.fast_accum

    def supports(self, problem, contract):
        if not has_module("triton"):
            return Skip("triton is not installed (inductor generates Triton code for CUDA)")
        if not contract.is_fp8:
            return _not_fp8("library.torch_compile")
        if contract.scaling is Scaling.BLOCK:
            return Skip("block scales: this row compiles torch._scaled_mm with per-tensor or row/column scales "
                        "(torch.nn.functional.scaled_mm's blockwise recipes are not compiled here; "
                        "library.cublaslt_fp8 runs them)")
        return CublasLtFp8().supports(problem, contract)  # torch._scaled_mm's own rules: the compiled call has them

    def contracts_summary(self):
        return ("FP8 only: e4m3 (or e4m3 x e5m2) in, tn, row-major C; per-tensor scales -> bf16/f16/f32, "
                "row/column scales -> bf16; use_fast_accum as the contract says")

    def constraints_summary(self):
        return "k%16==0, n%16==0 (torch._scaled_mm)"

    def prepare(self, problem, contract, operands, extension):
        return _CompiledFp8Prepared(self.name, problem, contract, operands, self.use_fast_accum(contract))


class _CompiledFp8Prepared(CompiledPrepared):
    def __init__(self, label, problem, contract, operands, fast_accum: bool):
        self.variant = self.fast_accum = fast_accum  # part of the compile key: the canary compiles its own
        super().__init__(label, problem, contract, operands)
        self.notes += _canary_note(fast_accum, contract)

    def function(self, contract):
        return scaled_mm_function(DTYPE_INFO[contract.c].torch_dtype, self.fast_accum)

    def arguments(self, contract, operands):
        return self.a, self.b, operands.scale_a, operands.scale_b


def _triton_fp8(params) -> TritonFp8:
    name = params.get("config")
    if name is None:
        return TritonFp8()
    if name not in BY_NAME:  # the spec checks the choice; a direct caller may not
        raise InvalidConfig(f"config {name!r} is not in the Triton FP8 list (triton_fp8_configs.py): {', '.join(NAMES)}")
    return TritonFp8(BY_NAME[name])


# A family, so that `config: auto` / `tune: auto` tune it (tuning.tuned.FAMILY_GRIDS); named plainly it is the row
# it always was (`library.triton_fp8`, Triton's autotuner over the list).
register_parametrized(Parametrized(
    "library.triton_fp8",
    [Param("config", "choice", default=None, choices=NAMES,
           help="one entry of the Triton FP8 list (BLOCK_MxNxK_wWARPS_sSTAGES_gGROUP_M); left out: Triton's autotuner "
                "over the whole list in prepare; auto: the harness races the list per problem")],
    _triton_fp8,
    description="gemmcompare's Triton FP8 GEMM (e4m3, tn, tensor/rowcol scales; strict: FP32 promotion every "
                "BLOCK_K): autotuned over its list, one entry of it, or raced per problem (config: auto)",
))
register_fixed("library.torch_compile_fp8", TorchCompileFp8)
