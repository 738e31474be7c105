"""Library rows for grouped problems (grouped.py; docs/grouped.md): the best a user calls today, and the naive
loop users write first.

`library.torch_grouped_mm` is torch's grouped GEMM: torch._grouped_mm (BF16 in, BF16 out: torch refuses an
out_dtype other than the input's, whatever F.grouped_mm's docstring says) with offs = the cumulative group ends,
one launch for every group; under an FP8 contract torch._scaled_grouped_mm
(e4m3 in, BF16 out, row-wise scales: a per-group tensor scale is expanded to its rows and columns outside
timing, exactly). The masked layout is its 3-D form (offs None): every group's whole capacity is computed, the
padding rows from A's NaN padding (executed FLOPs count it). Both return a new tensor: launch() drops the
previous output first, so torch's caching allocator hands the call the very block poison() filled with NaN
(same size, same stream), and a group the call leaves unwritten shows as NaN.

`library.triton_grouped` is Triton's grouped GEMM (its tutorial's persistent schedule over every group's tiles;
triton_grouped_kernels.py), autotuned in prepare over its configuration list, writing into the harness's C; both
layouts (the masked one through each group's start row and count).

`library.cublas_grouped` is cuBLAS's own grouped GEMM: one cublasGemmGroupedBatchedEx call (cuBLAS 12.5+), the
experts of equal M sharing a cuBLAS group, its operand pointers made on the device from the row offsets
(extensions/library/cublas_grouped*.{cpp,cu,h}); through the C ABI's grouped form, so the contiguous layout.

`library.cublaslt_fp8_loop` is that naive loop under FP8 contracts: one cuBLASLt FP8 GEMM per non-empty group (as
`library.cublaslt_fp8` calls it: torch._scaled_mm with the group's tensor or row/column scales into its rows of C,
or torch.nn.functional.scaled_mm with its 1x128 / 128x128 block scales, which returns the group's C), the only
library row for block-scaled grouped problems (torch's grouped GEMM takes no block scales). cuBLASLt's block-scaled
GEMM refuses an M that is not a multiple of 4, so such a group's A (and its scales) is padded with zero rows outside
timing, as a user would pad it, and its C keeps the first M rows; each group's scales are fresh 16-byte-aligned copies
(cuBLASLt refuses a scale pointer inside the stacked scales).

`library.cublas_loop` is the naive baseline: one torch.mm (a cuBLAS GEMM) per non-empty group, in group order on
the harness's one stream, each writing its group's rows of the harness's C. The group Ms are host integers (a
router's counts copied to the host, as such a loop needs: that copy is not timed); its timed launches include
the host's launch of every group's GEMM, which is what such a loop costs.
"""

from __future__ import annotations

from ..build.request import KernelSource
from ..contracts.precision import Epilogue, Math, Scaling
from ..dtypes import DTYPE_INFO, DType
from ..paths import EXTENSIONS_DIR
from .base import AbiKernel, Constraints, ContractSupport, Implementation, Ok, Prepared, Skip, policy_output, transposed
from .library import has_out_dtype
from .python_launch import WritesC
from .library_fp8 import BLOCK_M_MULTIPLE, CublasLtFp8, block_scale_b_forms, first_accepted
from .python_library import has_module, tensor_core_support
from .registry import register_fixed

TAKES = "bf16 in -> bf16 or f32 out, acc f32, strict; FP8: e4m3 in -> bf16 out with tensor or rowcol scales"


def _has(name: str) -> bool:
    """Whether the installed torch has torch.<name>: asked of torch itself where it is loaded (the measuring
    worker), else read from its version (both came in torch 2.8), so that planning a spec imports no torch."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        return hasattr(torch, name)
    return has_out_dtype()  # torch >= 2.8, read from the installed version


class TorchGroupedMm(Implementation):
    family = "library"
    description = ("torch._grouped_mm (torch._scaled_grouped_mm under FP8): every group in one launch, offs = the "
                   "cumulative group ends")
    takes_grouped = True
    grouped_fp8 = True
    min_cc = 80  # torch's grouped GEMM kernels need SM 8.0+ (its FP8 form: Hopper, SM 9.0+)

    def __init__(self):
        super().__init__("torch_grouped_mm")

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip("it runs grouped problems only (library.torch_matmul runs dense ones)")
        if contract.alpha != 1.0 or contract.beta != 0.0 or contract.epilogue is not Epilogue.NONE:
            return Skip("torch._grouped_mm computes A @ B only (alpha=1, beta=0, no epilogue)")
        if contract.acc is not DType.F32 or contract.math is not Math.STRICT:
            return Skip(f"torch._grouped_mm accumulates in f32 (strict), not {contract.acc.value}/{contract.math.value}")
        if contract.is_fp8:
            if not _has("_scaled_grouped_mm"):
                return Skip("this torch has no torch._scaled_grouped_mm")
            if contract.a is not DType.E4M3 or contract.b is not DType.E4M3 or contract.c is not DType.BF16:
                return Skip(f"torch._scaled_grouped_mm takes e4m3 inputs with a bf16 output, not "
                            f"{contract.a.value}/{contract.b.value} -> {contract.c.value}")
            if problem.layout == "masked":
                return Skip("the masked layout's 3-D scale shapes of torch._scaled_grouped_mm are not wired here; "
                            "the contiguous layout runs FP8")
            if contract.scaling not in (Scaling.TENSOR, Scaling.ROWCOL):
                return Skip(f"torch._scaled_grouped_mm takes row-wise scales (a per-group tensor scale expands to "
                            f"them); {contract.scaling.value} scales are not offered")
            return Ok()
        if not _has("_grouped_mm"):
            return Skip("this torch has no torch._grouped_mm")
        if contract.a is not DType.BF16 or contract.b is not DType.BF16 or contract.c is not DType.BF16:
            return Skip(f"torch._grouped_mm takes bf16 inputs and writes bf16 (its output dtype must match "
                        f"mat_a's), not "
                        f"{contract.a.value}/{contract.b.value} -> {contract.c.value}")
        return Ok()

    def contracts_summary(self):
        return TAKES + " (grouped problems only)"

    def prepare(self, problem, contract, operands, extension):
        return _GroupedMmPrepared(problem, contract, operands)


class _GroupedMmPrepared(Prepared):
    def __init__(self, problem, contract, operands):
        import torch

        self.torch = torch  # kept, so that launch() (timed) does no import
        a, lda = operands.stored("a", contract.order_a)  # stacked rows (or groups x capacity), row-major
        b, ldb = operands.stored("b", contract.order_b)  # groups x N x K (K-major)
        self.a, self.b = a, transposed(b)  # groups x K x N column-major: what torch's grouped GEMMs take
        masked = problem.layout == "masked"
        # offs: the end of each group (int32), for the stacked layout; the masked layout is torch's 3-D form
        self.offs = None if masked else operands.m_offsets[1:]
        self.out_dtype = DTYPE_INFO[contract.c].torch_dtype
        self.fp8 = contract.is_fp8
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": problem.n,
                             "copies_in_timing": [], "c": "torch's own output tensor"}
        if self.fp8:
            self.scale_a, self.scale_b = _rowwise_scales(problem, contract, operands)
            self.fast_accum = contract.fast_accum
        what = "torch._scaled_grouped_mm (row-wise scales)" if self.fp8 else "torch._grouped_mm"
        self.notes = (f"{what}, offs = cumulative group ends" if not masked else
                      f"{what} on the masked 3-D operands: computes every group's {problem.capacity} rows")
        if masked:
            self.executed_flops = 2 * problem.groups * problem.capacity * problem.n * problem.k
        self.out = None
        self.launch()  # one call outside timing (its output block is the one poison() fills)

    def launch(self):
        torch = self.torch
        self.out = None  # freed first: the call gets the poisoned block back from the caching allocator
        if self.fp8:
            self.out = torch._scaled_grouped_mm(self.a, self.b, self.scale_a, self.scale_b, offs=self.offs,
                                                out_dtype=self.out_dtype, use_fast_accum=self.fast_accum)
        else:
            self.out = torch._grouped_mm(self.a, self.b, offs=self.offs, out_dtype=self.out_dtype)

    def poison(self):
        if self.out is not None:
            self.out.fill_(float("nan"))

    def output(self):
        return self.out


def _rowwise_scales(problem, contract, operands):
    """scale_a per row of the stacked A (sum M) and scale_b per group and column (groups x N),
    FP32: torch._scaled_grouped_mm's row-wise form. A per-group tensor scale is repeated over its group's rows and
    columns (the same numbers: exact). Made here, outside timing."""
    import torch

    sa, sb = operands.scale_a, operands.scale_b
    if contract.scaling is Scaling.TENSOR:  # groups x 1 x 1 each
        per_group = sa.reshape(-1)
        sa = torch.repeat_interleave(per_group, torch.tensor(problem.ms, device=per_group.device))
        sb = sb.reshape(-1, 1).expand(problem.groups, problem.n)
    return sa.reshape(-1).contiguous(), sb.reshape(problem.groups, problem.n).contiguous()


def cublas_version() -> tuple[int, int] | None:
    """The installed cuBLAS wheel's (major, minor) (nvidia-cublas for CUDA 13, nvidia-cublas-cu12 before), or None
    where no wheel says (a system cuBLAS: the entry's own compile-time check then answers)."""
    import importlib.metadata as md

    for name in ("nvidia-cublas", "nvidia-cublas-cu12"):
        try:
            major, minor = md.version(name).split(".")[:2]
            return int(major), int(minor)
        except (md.PackageNotFoundError, ValueError):
            continue
    return None


class CublasGrouped(AbiKernel):
    family = "library"
    description = ("cublasGemmGroupedBatchedEx: every expert with tokens in one call, equal Ms sharing a cuBLAS group, "
                   "operand pointers made on the device from the row offsets")
    build_group = "library_cublas_grouped"
    entry_symbol = "gc_library_cublas_grouped"
    has_workspace = True  # the device table of operand pointers (3 per group)
    include_dirs = (str(EXTENSIONS_DIR),)  # "library/cublas_common.h" and the grouped headers
    kernel_filter = r"^$"  # cuBLAS kernels are not ours to report
    takes_grouped = True
    grouped_fp8_note = "cublasGemmGroupedBatchedEx has no FP8 path (library.torch_grouped_mm runs FP8 grouped problems)"
    contract_support = ContractSupport(
        inputs=frozenset({DType.F16, DType.BF16, DType.F32}), outputs=frozenset({DType.F16, DType.BF16, DType.F32}),
        accumulators=frozenset({DType.F32}), maths=frozenset({Math.STRICT, Math.TF32}), alpha_beta=True,
    )
    # pointers are 64-bit (made on the device per expert); cuBLAS's int dimensions are checked in supports()
    constraints = Constraints(index_bits=64)

    def __init__(self):
        super().__init__("cublas_grouped")

    def sources(self):
        folder = EXTENSIONS_DIR / "library"
        return (KernelSource("cublas_grouped.cpp", path=folder / "cublas_grouped.cpp"),
                KernelSource("cublas_grouped_table.cu", path=folder / "cublas_grouped_table.cu"))

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip("it runs grouped problems only (library.cublas runs dense ones)")
        if contract.is_fp8:
            return Skip(self.grouped_fp8_note)
        version = cublas_version()
        if version is not None and version < (12, 5):
            return Skip(f"cublasGemmGroupedBatchedEx came in cuBLAS 12.5; this one is {version[0]}.{version[1]}")
        if contract.c is not contract.a:  # first: it holds for every layout
            return Skip(f"cublasGemmGroupedBatchedEx writes its input type ({contract.a.value} in, "
                        f"{contract.a.value} out), not {contract.c.value}")
        s = super().supports(problem, contract)  # the contract's types and math; the contiguous layout
        if not s:
            return s
        if contract.math is Math.TF32 and contract.a is not DType.F32:
            return Skip("TF32 math applies to FP32 inputs only")
        for what, value in (("n", problem.n), ("k", problem.k), ("a group's M", max(problem.ms))):
            if value > 2**31 - 1:
                return Skip(f"{what}={value:,} does not fit cuBLAS's int dimensions")
        return Ok()

    def contracts_summary(self):
        return "f16->f16, bf16->bf16, f32->f32 (tf32 under a tf32 contract), acc f32, alpha/beta (grouped, contiguous)"


class CublasLoop(Implementation):
    family = "library"
    description = "the naive baseline: one torch.mm (cuBLAS) per non-empty group, in group order on one stream"
    takes_grouped = True
    grouped_fp8_note = ("a loop of torch.mm has no FP8 path (library.torch_grouped_mm runs FP8 grouped problems "
                        "through torch._scaled_grouped_mm)")

    def __init__(self):
        super().__init__("cublas_loop")

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip("it runs grouped problems only (library.cublas runs dense ones)")
        if contract.is_fp8:
            return Skip(self.grouped_fp8_note)
        if contract.a != contract.b or contract.a not in (DType.F16, DType.BF16, DType.F32):
            return Skip(f"inputs {contract.a.value}/{contract.b.value}: torch.mm here takes matching f16, bf16 or f32")
        if contract.acc is not DType.F32 or contract.math is not Math.STRICT:
            return Skip(f"torch.mm here accumulates in f32, strict (not {contract.acc.value}/{contract.math.value})")
        if contract.c is not contract.a and not (contract.c is DType.F32 and has_out_dtype()):
            return Skip(f"torch.mm on {contract.a.value} inputs returns {contract.a.value}, not {contract.c.value}")
        if contract.alpha != 1.0 or contract.beta != 0.0 or contract.epilogue is not Epilogue.NONE:
            return Skip("torch.mm computes A @ B only (alpha=1, beta=0, no epilogue)")
        return Ok()

    def contracts_summary(self):
        return "f16/bf16/f32 in -> same dtype out (f32 via out_dtype), acc f32, strict (grouped problems only)"

    def prepare(self, problem, contract, operands, extension):
        return _LoopPrepared(problem, contract, operands)


class _LoopPrepared(Prepared):
    def __init__(self, problem, contract, operands):
        import torch

        a, lda = operands.stored("a", contract.order_a)
        b, ldb = operands.stored("b", contract.order_b)
        self._out_full, self.out, ldc = policy_output(problem, contract, a.device)
        weights = transposed(b)  # groups x K x N, each group's K x N column-major view
        rows = (lambda t, g: t[g, : problem.ms[g]]) if problem.layout == "masked" else \
            (lambda t, g: t[problem.offsets[g]: problem.offsets[g + 1]])  # noqa: E731
        # (A rows, B, C rows) of every group with tokens: the views are made once, here
        self.calls = [(rows(a, g), weights[g], rows(self.out, g)) for g, m in enumerate(problem.ms) if m]
        self.mm = torch.mm
        self.widen = {"out_dtype": torch.float32} if contract.c is not contract.a else {}
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": ldc,
                             "copies_in_timing": []}
        m = torch.backends.cuda.matmul
        m.allow_fp16_reduced_precision_reduction = False
        m.allow_bf16_reduced_precision_reduction = False
        self.kernels_per_launch = len(self.calls)  # none when every group is empty (the timer counts at least 1)
        self.notes = (f"{len(self.calls)} torch.mm calls (one per non-empty group of {problem.groups}), one stream"
                      + (", out_dtype=float32" if self.widen else ""))

    def launch(self):
        mm, widen = self.mm, self.widen
        for a, b, c in self.calls:
            mm(a, b, out=c, **widen)

    def poison(self):
        self._out_full.fill_(float("nan"))

    def output(self):
        return self.out


class TritonGrouped(Implementation):
    family = "library"
    description = ("Triton's grouped GEMM: one persistent launch over every group's tiles (the tutorial's "
                   "schedule), autotuned over its configuration list in prepare")
    takes_grouped = True
    grouped_fp8_note = "the Triton grouped GEMM here is the f16/bf16 one (no FP8 path)"
    min_cc = 80

    def __init__(self):
        super().__init__("triton_grouped")

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip("it runs grouped problems only (library.triton_matmul runs dense ones)")
        if not has_module("triton"):
            return Skip("triton is not installed")
        if contract.is_fp8:
            return Skip(self.grouped_fp8_note)
        s = tensor_core_support(contract, "the Triton grouped GEMM", "tl.dot rounds FP32 operands to TF32")
        if not s:
            return s
        # 32-bit offsets within A and C (B's group offset is 64-bit): rows x K and rows x N below 2^31
        big = max(problem.rows * problem.k, problem.rows * problem.n)
        if big >= 2**31:
            return Skip(f"{big:,} elements in A or C: the kernel's row offsets are 32-bit (at most 2^31 - 1)")
        return Ok()

    def contracts_summary(self):
        return "f16/bf16 in -> f32 or same dtype out, acc f32, alpha/beta (grouped problems only)"

    def prepare(self, problem, contract, operands, extension):
        return _TritonGroupedPrepared(self.name, problem, contract, operands)


class _TritonGroupedPrepared(WritesC):
    """The stacked A and C as 2-D row blocks, each group's start row and count as int32 device tensors; the
    first call autotunes, then one call is captured in a CUDA graph (WritesC's settle)."""

    first_call_name = "autotune_s"
    first_call_label = "autotuning"
    first_call_what = "Triton compilation and benchmarking every configuration"

    def __init__(self, label, problem, contract, operands):
        import torch

        super().__init__(label, problem, contract, operands)
        from . import triton_grouped_kernels as kernels

        self.kernels, self.ms = kernels, list(problem.ms)
        k, n = problem.k, problem.n
        self.a2, self.c2 = self.a.reshape(-1, k), self.c.reshape(-1, n)  # masked: groups x capacity rows, stacked
        if problem.layout == "masked":
            self.starts = torch.arange(problem.groups, dtype=torch.int32, device=self.a.device) * problem.capacity
            self.counts = operands.masked_counts
        else:
            self.starts = operands.m_offsets[:-1].contiguous()
            self.counts = (operands.m_offsets[1:] - operands.m_offsets[:-1]).contiguous()
        self.programs = (torch.cuda.get_device_properties(self.a.device).multi_processor_count
                         if self.a.is_cuda else 4)  # persistent: one program per SM
        self.settle("auto", (label, problem, contract.name))
        chosen = kernels.describe(kernels.grouped_autotuned.best_config)
        self.timing_fields["triton_config"] = chosen
        self.notes += (f"; autotuned over {len(kernels.CONFIGS)} configurations in prepare, outside timing: chose "
                       f"{chosen}; at most {self.programs} programs (one per SM), each walking the groups' tiles")

    def call(self):
        self.kernels.launch(self.a2, self.b, self.c2, self.starts, self.counts, self.ms, self.alpha, self.beta,
                            self.programs)


class CublasLtFp8Loop(CublasLtFp8):
    family = "library"
    description = ("the naive FP8 baseline: one cuBLASLt FP8 GEMM (torch._scaled_mm, or scaled_mm with block scales) "
                   "per non-empty group, in group order on one stream, with the group's scales")
    takes_grouped = True
    grouped_fp8 = True

    def __init__(self):
        super().__init__("cublaslt_fp8_loop")

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip("it runs grouped problems only (library.cublaslt_fp8 runs dense ones)")
        return super().supports(problem, contract)

    def contracts_summary(self):
        return super().contracts_summary() + " (grouped problems only, one call per group)"

    def prepare(self, problem, contract, operands, extension):
        return _Fp8LoopPrepared(problem, contract, operands)


class _Fp8LoopPrepared(Prepared):
    """Per non-empty group: its A rows, its B (K x N column-major), its scales in the shape cuBLASLt takes (made here,
    outside timing) and, but for block scales, its rows of the harness's C. Block-scaled calls return the group's C:
    the outputs are kept, and output() lays them out as the problem's C (outside timing), NaN where none came."""

    def __init__(self, problem, contract, operands):
        import torch

        self.torch, self.problem = torch, problem
        a, lda = operands.stored("a", contract.order_a)
        b, ldb = operands.stored("b", contract.order_b)  # groups x N x K
        self._out_full, self.out, ldc = policy_output(problem, contract, a.device)
        self.out_dtype = DTYPE_INFO[contract.c].torch_dtype
        self.fast_accum, self.scaling = contract.fast_accum, contract.scaling
        masked = problem.layout == "masked"
        sa, sb = operands.scale_a, operands.scale_b

        def rows(t, g):  # group g's rows of a stacked (or groups x capacity) tensor
            return t[g, : problem.ms[g]] if masked else t[problem.offsets[g]: problem.offsets[g + 1]]

        # Each group's scales are fresh allocations: a view into the stacked scales starts 4 bytes x its offset
        # in, and cuBLASLt refuses a scale pointer that is not 16-byte aligned (NOT_SUPPORTED).
        fresh = lambda t: t.clone(memory_format=torch.contiguous_format)  # noqa: E731
        self.calls, self.padded = [], 0
        for g, m in enumerate(problem.ms):
            if not m:
                continue
            a_g = rows(a, g)
            if self.scaling is Scaling.BLOCK:  # outer-dim-major copies, as library.cublaslt_fp8 makes them
                sa_g = rows(sa, g)
                if m % BLOCK_M_MULTIPLE:  # zero rows (scale 1) up to the multiple; output() keeps the first m
                    a_g, sa_g = _pad_rows(a_g, BLOCK_M_MULTIPLE, 0.0), _pad_rows(sa_g, BLOCK_M_MULTIPLE, 1.0)
                    self.padded += 1
                scales = (sa_g.t().contiguous().t(), block_scale_b_forms(sb[g]))  # B's: every form, chosen below
            elif self.scaling is Scaling.ROWCOL:
                scales = (fresh(rows(sa, g).reshape(m, 1)), fresh(sb[g].reshape(1, problem.n)))
            else:  # one scale per group and operand
                scales = (fresh(sa[g].reshape(())), fresh(sb[g].reshape(())))
            self.calls.append((g, a_g, b[g].t(), *scales, rows(self.out, g)))
        F = torch.nn.functional
        self.recipes = (F.ScalingType.BlockWise1x128, F.ScalingType.BlockWise128x128) \
            if self.scaling is Scaling.BLOCK else None
        if self.recipes and self.calls:  # the form of B's padded block scales the installed torch takes, tried once
            _, a0, b0, sa0, forms0, _ = self.calls[0]
            pick = first_accepted(list(range(len(forms0))), lambda i: F.scaled_mm(
                a0, b0, sa0, self.recipes[0], forms0[i], self.recipes[1], output_dtype=self.out_dtype,
                use_fast_accum=self.fast_accum))
            self.calls = [(g, a_g, b_g, sa_g, forms[pick], c_g) for g, a_g, b_g, sa_g, forms, c_g in self.calls]
        self.outs: dict[int, object] = {}
        self.kernels_per_launch = len(self.calls)  # none when every group is empty (the timer counts at least 1)
        self.storage_info = {"policy": contract.storage.value, "lda": lda, "ldb": ldb, "ldc": ldc,
                             "copies_in_timing": []}
        how = ("torch.nn.functional.scaled_mm BlockWise1x128 x BlockWise128x128, each returning its group's C"
               if self.recipes else f"torch._scaled_mm ({self.scaling.value} scales) into its rows of C")
        self.notes = (f"{len(self.calls)} cuBLASLt FP8 calls (one per non-empty group of {problem.groups}), one "
                      f"stream: {how}; use_fast_accum={self.fast_accum}")
        if self.padded:
            self.notes += (f"; {self.padded} groups' A padded with zero rows to a multiple of {BLOCK_M_MULTIPLE} "
                           f"outside timing (cuBLASLt's block-scaled FP8 refuses other M)")

    def launch(self):
        torch, fast = self.torch, self.fast_accum
        if self.recipes is not None:
            scaled_mm, (ra, rb), dtype = torch.nn.functional.scaled_mm, self.recipes, self.out_dtype
            for g, a, b, sa, sb, _ in self.calls:
                self.outs[g] = scaled_mm(a, b, sa, ra, sb, rb, output_dtype=dtype, use_fast_accum=fast)
        else:
            for _, a, b, sa, sb, c in self.calls:
                torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=self.out_dtype, use_fast_accum=fast, out=c)

    def poison(self):
        self._out_full.fill_(float("nan"))
        self.outs = {}

    def output(self):
        if self.recipes is not None:  # the groups' own outputs, laid out as the problem's C (not timed)
            self._out_full.fill_(float("nan"))
            for g, _, _, _, _, c in self.calls:
                if g in self.outs:
                    c.copy_(self.outs[g][: c.shape[0]])  # a padded group's extra rows dropped
        return self.out


def _pad_rows(t, multiple: int, fill: float):
    """t with rows appended up to a multiple of `multiple`, holding `fill` (a new tensor; t's dtype, FP8 too)."""
    import torch

    rows = -(-t.shape[0] // multiple) * multiple
    out = torch.full((rows, *t.shape[1:]), fill, dtype=torch.float32, device=t.device).to(t.dtype)
    out[: t.shape[0]].copy_(t)
    return out


register_fixed("library.torch_grouped_mm", TorchGroupedMm)
register_fixed("library.cublaslt_fp8_loop", CublasLtFp8Loop)
register_fixed("library.triton_grouped", TritonGrouped)
register_fixed("library.cublas_loop", CublasLoop)
register_fixed("library.cublas_grouped", CublasGrouped)
