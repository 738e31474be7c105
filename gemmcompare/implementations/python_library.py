"""The library rows that run Python: gemmcompare's Triton GEMM and torch.compile of the contract's GEMM.

- `library.triton_matmul`: gemmcompare's Triton GEMM (triton_kernels.py), autotuned in prepare.
- `library.torch_compile`: torch.compile(mode="max-autotune-no-cudagraphs") of the contract's GEMM.
- FP8 contracts: `library.triton_fp8` and `library.torch_compile_fp8`, in python_fp8.py.

Both are launched from Python as the `python` family is (python_launch.py): a first call outside timing (the
autotuning or the compilation, recorded apart), then CUDA-graph replays of one call.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
import types
import warnings
from typing import Any, Callable

from ..contracts.precision import Epilogue, Math, Order
from ..dtypes import DType
from .base import Constraints, Implementation, Ok, Skip, Support
from .python_launch import PythonLaunch, WritesC
from .registry import register_fixed


def has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def tensor_core_support(contract, who: str, why_not_f32: str) -> Support:
    """What both built-in rows honour: f16/bf16 inputs, FP32 accumulation, C in FP32 or the input dtype,
    row-major C, no fused epilogue."""
    if contract.a != contract.b or contract.a not in (DType.F16, DType.BF16):
        return Skip(f"inputs {contract.a.value}/{contract.b.value}: {who} takes matching f16 or bf16"
                    + (f" ({why_not_f32})" if contract.a is DType.F32 else ""))
    if contract.acc is not DType.F32:
        return Skip(f"{who} accumulates in f32, not {contract.acc.value}")
    if contract.c not in (DType.F32, contract.a):
        return Skip(f"output {contract.c.value}: {who} writes f32 or the input dtype")
    if contract.math is Math.TF32:
        return Skip("TF32 math applies to FP32 inputs only")
    if contract.order_c is not Order.ROW:
        return Skip(f"{who} writes a row-major C")
    if contract.epilogue is not Epilogue.NONE:
        return Skip(f"epilogue {contract.epilogue.value} not offered")
    return Ok()


class TritonMatmul(Implementation):
    family = "library"
    description = ("gemmcompare's Triton GEMM (Triton's tutorial matmul, any strides, alpha/beta; a batch as the "
                   "grid's second axis), autotuned over its configuration list in prepare")
    min_cc = 80

    def __init__(self):
        super().__init__("triton_matmul")

    def supports(self, problem, contract):
        if not has_module("triton"):
            return Skip("triton is not installed")
        if contract.is_fp8:
            return Skip("FP8 inputs need their scales: library.triton_fp8 runs FP8 contracts")
        s = tensor_core_support(contract, "the Triton GEMM", "tl.dot rounds FP32 operands to TF32 by default, "
                                 "which a strict contract forbids; this row is the FP16/BF16 tensor-core GEMM")
        if not s:
            return s
        if problem.batch > 65535:  # the batch is the launch grid's axis 1
            return Skip(f"batch {problem.batch} is over the Triton GEMM's 65535 (its batch is grid axis 1)")
        # the kernel's offsets within a matrix are 32-bit products; a batch's matrices are 64-bit strides apart
        return Constraints(index_bits=32).check(dataclasses.replace(problem, batch=1))

    def contracts_summary(self):
        return "f16/bf16 in -> f32 or same dtype out, acc f32, any A/B order (strides), row-major C, alpha/beta"

    def constraints_summary(self):
        return "32-bit indices"

    def prepare(self, problem, contract, operands, extension):
        return _TritonPrepared(self.name, problem, contract, operands)


_PRECOMPILED: dict[tuple, int] = {}  # per process: configurations compiled in parallel before autotuning


class _TritonPrepared(WritesC):
    first_call_name = "autotune_s"
    first_call_label = "autotuning"
    first_call_what = "Triton compilation and benchmarking every configuration"

    def __init__(self, label, problem, contract, operands):
        super().__init__(label, problem, contract, operands)
        from . import triton_kernels

        self.tk, self.key = triton_kernels, (label, problem, contract.name)
        self.settle("auto", self.key)
        chosen = triton_kernels.describe(triton_kernels.matmul_autotuned.best_config)
        count = len(triton_kernels.CONFIGS)
        self.timing_fields["triton_config"] = chosen
        self.notes += (f"; autotuned over {count} configurations in prepare ({_PRECOMPILED.get(self.key, 0)} "
                       f"compiled in parallel first), outside timing: chose {chosen}")

    def first_call(self):
        try:  # a speed-up only: whatever fails here, the autotuner compiles serially below
            _PRECOMPILED[self.key] = self.tk.precompile(self.a, self.b, self.c, self.alpha, self.beta)
        except Exception:  # noqa: BLE001
            _PRECOMPILED[self.key] = 0
        self.call()

    def call(self):
        self.tk.launch(self.a, self.b, self.c, self.alpha, self.beta)


# torch.compile: one compiled function per (problem, contract) in a process, each with its own code object
# (dynamo keeps compiled code per code object: one code object for all would pile recompiles onto it
# until its recompile limit, past which dynamo silently runs eager).
_COMPILED: dict[tuple, tuple[Callable, str]] = {}  # key -> (compiled function, what it computes)
_INDUCTOR_CHOICE: dict[tuple, str] = {}
COMPILE_MODE = "max-autotune-no-cudagraphs"


def gemm_function(widen: bool, alpha: float, beta: float, batched: bool = False) -> tuple[Callable, str]:
    """The contract's GEMM as torch code, and its text: torch.mm (output in the input dtype) or
    torch.mm(out_dtype=torch.float32); torch.addmm, or an FP32 epilogue, when alpha != 1 or beta != 0. A
    batched problem's 3-D operands: torch.bmm and torch.baddbmm, the same in every other respect."""
    import torch

    mm, addmm = (torch.bmm, torch.baddbmm) if batched else (torch.mm, torch.addmm)
    mm_text, addmm_text = f"torch.{mm.__name__}", f"torch.{addmm.__name__}"
    if alpha == 1.0 and beta == 0.0:
        if widen:
            def gemm(a, b):
                return mm(a, b, out_dtype=torch.float32)
            text = f"{mm_text}(a, b, out_dtype=torch.float32)"
        else:
            def gemm(a, b):
                return mm(a, b)
            text = f"{mm_text}(a, b)"
    elif widen:  # inductor cannot lower addmm with out_dtype (pytorch#163880): scale in an FP32 epilogue
        def gemm(a, b, c0):
            return alpha * mm(a, b, out_dtype=torch.float32) + beta * c0
        text = f"{alpha!r} * {mm_text}(a, b, out_dtype=torch.float32) + {beta!r} * c0"
    else:
        def gemm(a, b, c0):
            return addmm(c0, a, b, beta=beta, alpha=alpha)
        text = f"{addmm_text}(c0, a, b, beta={beta!r}, alpha={alpha!r})"
    return fresh_function(gemm), text


def fresh_function(gemm: Callable) -> Callable:
    """`gemm` with a code object of its own (see _COMPILED above)."""
    name = f"gemmcompare_gemm_{len(_COMPILED)}"
    code = gemm.__code__.replace(co_name=name, co_qualname=name) if sys.version_info >= (3, 11) else \
        gemm.__code__.replace(co_name=name)
    return types.FunctionType(code, gemm.__globals__, name, gemm.__defaults__, gemm.__closure__)


def summarize_inductor_code(codes: list[str]) -> str:
    """What inductor's generated code runs: ATen extern kernels (cuBLAS) and Triton kernels, with the
    template's tile when one is a GEMM template."""
    text = "\n".join(codes)
    parts = [f"extern_kernels.{k} (ATen; cuBLAS on CUDA)" for k in dict.fromkeys(re.findall(r"extern_kernels\.(\w+)\(", text))]
    for kernel in dict.fromkeys(re.findall(r"\b(triton_\w+)\.run\(", text)):
        source = re.search(rf"async_compile\.triton\(\s*'{kernel}',\s*'''(.*?)'''", text, re.S)
        meta = ""
        if source and "_tem_" in kernel:
            body = source.group(1)
            found = re.findall(r"\b(BLOCK_[MNK]|GROUP_M)\s*:\s*tl\.constexpr\s*=\s*(\d+)", body)
            found += re.findall(r"\b(num_stages|num_warps)=(\d+)", body)
            meta = " (" + ", ".join(f"{k}={v}" for k, v in dict(found).items()) + ")" if found else ""
        parts.append(f"{kernel}{meta}")
    return "; ".join(parts) if parts else "no kernel identified in inductor's code"


class TorchCompile(Implementation):
    family = "library"
    description = (f'torch.compile(mode="{COMPILE_MODE}") of the contract\'s GEMM (torch.mm, out_dtype for an FP32 '
                   f"output, addmm for alpha/beta; bmm and baddbmm when batched); compile time recorded apart")
    min_cc = 80

    def __init__(self):
        super().__init__("torch_compile")

    def supports(self, problem, contract):
        if not has_module("triton"):
            return Skip("triton is not installed (inductor generates Triton code for CUDA)")
        if contract.is_fp8:
            return Skip("FP8 inputs need their scales: library.torch_compile_fp8 runs FP8 contracts (torch._scaled_mm)")
        s = tensor_core_support(contract, "torch.compile of torch.mm", "not offered: this row compiles the "
                                 "FP16/BF16 tensor-core GEMM")
        if not s:
            return s
        if contract.c is not contract.a:
            from .library import has_out_dtype

            if not has_out_dtype():
                return Skip(f"torch.mm on {contract.a.value} inputs returns {contract.a.value}; this torch has no "
                            f"out_dtype for an f32 output")
        return Ok()

    def contracts_summary(self):
        return "f16/bf16 in -> same dtype out (torch.mm) or f32 (torch.mm out_dtype), acc f32, any A/B order, row-major C, alpha/beta"

    def prepare(self, problem, contract, operands, extension):
        return CompiledPrepared(self.name, problem, contract, operands)


class CompiledPrepared(PythonLaunch):
    first_call_name = "compile_s"
    first_call_label = "compile"
    first_call_what = f"dynamo + inductor, {COMPILE_MODE}, caches off"

    variant: Any = None  # a further part of the compile key (library.torch_compile_fp8: use_fast_accum)

    def __init__(self, label, problem, contract, operands):
        import torch

        super().__init__(label, problem, contract, operands)
        self.key = (label, problem, contract.name, tuple(self.a.stride()), tuple(self.b.stride()), self.variant)
        if self.key not in _COMPILED:
            fn, text = self.function(contract)
            _COMPILED[self.key] = (torch.compile(fn, mode=COMPILE_MODE, dynamic=False, fullgraph=True), text)
        self.fn, self.text = _COMPILED[self.key]
        self.args = self.arguments(contract, operands)
        self.out = None
        # no reduced-precision reductions in the ATen (cuBLAS) choice, as library.torch_matmul
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        self.settle("auto", self.key)
        choice = _INDUCTOR_CHOICE.get(self.key, "not identified")
        # the compiled function returns its own C (torch.mm allocates it contiguous): say so, whatever the policy
        self.storage_info["ldc"] = self.out.stride(-2) if self.out is not None else None
        self.storage_info["c"] = "the compiled function's own output tensor"
        self.timing_fields.update({"compiled": self.text, "inductor_kernels": choice})
        self.notes += f"; compiled {self.text}; inductor's code runs {choice}"

    def function(self, contract) -> tuple[Callable, str]:
        """The contract's GEMM as torch code, and its text (compiled once per key)."""
        return gemm_function(contract.c is not contract.a, float(contract.alpha), float(contract.beta),
                             self.problem.batch != 1)

    def arguments(self, contract, operands) -> tuple:
        if contract.alpha == 1.0 and contract.beta == 0.0:
            return self.a, self.b
        return self.a, self.b, operands.c0

    def call(self):
        self.out = self.fn(*self.args)

    def first_call(self):
        """The compiling call: inductor's caches off (so compile_s is a cold compile and its code is seen),
        its generated code kept to name what it runs."""
        import torch
        from unittest import mock

        from torch._inductor.graph import GraphLowering

        codes: list[str] = []
        settings = {k: v for k, v in (("force_disable_caches", True), ("fx_graph_cache", False),
                                      ("autotune_local_cache", False)) if hasattr(torch._inductor.config, k)}
        with torch._inductor.config.patch(settings), \
                mock.patch.object(GraphLowering, "save_output_code", lambda code: codes.append(code)), \
                warnings.catch_warnings():
            # dynamo says that the caches turned off above turn its profile-guided cache off too: by design here
            warnings.filterwarnings("ignore", message="dynamo_pgo force disabled", category=UserWarning)
            self.call()
        _INDUCTOR_CHOICE[self.key] = summarize_inductor_code(codes)

    def output(self):
        return self.out

    def poison(self):
        # a graph's output lives at one address, so the poison is seen; direct calls return a new tensor
        if self.out is not None:
            self.out.fill_(float("nan"))


register_fixed("library.triton_matmul", TritonMatmul)
register_fixed("library.torch_compile", TorchCompile)
