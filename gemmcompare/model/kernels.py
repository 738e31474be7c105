"""What the models need to know about a kernel, and how a result row describes one.

A `KernelShape` is the handful of facts that decide a kernel's ceiling: its block tile, block size,
registers and shared memory (occupancy), its math instruction (issue ceiling), its dtypes (which peak),
its padding (executed work) and its raster order, cluster and scheduling (waves and HBM traffic).

`kernel_from_row` reads those facts off a result row: the family's parameters name the tile and threads,
ptxas's registers and shared memory come with the row, and the contract's spelling names the dtypes.
Hand-written lab kernels have fixed tiles, listed in LAB_KERNELS from extensions/lab/*.cu.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from .. import peaks as _peaks
from .ceilings import INSTRUCTIONS
from .occupancy import BlockResources


@dataclass(frozen=True)
class KernelShape:
    """One kernel as the performance models see it."""

    name: str
    instruction: str  # 'ffma', 'wmma', 'mma_sync', 'wgmma', 'tcgen05', 'library'
    input_dtype: str  # A and B: 'f16', 'bf16', 'f32', 'e4m3', 'e5m2'
    output_dtype: str
    accumulator: str  # 'f32' or 'f16'
    math: str = "strict"  # 'tf32' lets FP32 inputs run on TF32 tensor cores
    block_tile: tuple[int, int, int] | None = None  # (BM, BN, BK); None when unknown (a library)
    threads_per_block: int | None = None
    registers_per_thread: int | None = None
    static_shared_bytes: int = 0
    dynamic_shared_bytes: int = 0
    pad_to: tuple[int, int, int] = (1, 1, 1)  # the harness pads m, n, k to these multiples
    raster_group: int = 1  # tile rows (or columns) walked together, for L2 reuse
    raster_along: str = "n"  # 'n': groups of tile rows walked column by column; 'm': the transpose
    cluster: tuple[int, int] = (1, 1)
    persistent: bool = False
    stream_k: bool = False
    split_k: int = 1
    stages: int | None = None  # shared-memory pipeline stages (None: unknown or chosen by the library)
    lab_loop: str | None = None  # a lab kernel whose main loop the data-path model counts (model/datapath.py)
    warp_tile: tuple[int, int] | None = None
    a_col: bool = False  # storage orders of A and B (column-major when True), from the contract's letters
    b_col: bool = False
    swap_ab: bool = False  # computes D^T = B^T A^T: its tiles cover the problem transposed (n x m)
    notes: tuple[str, ...] = ()

    def unswapped(self, problem):
        """(problem, kernel) as the kernel's tiles see them: when it swaps A and B, the problem (n, m, k) and this
        kernel without swap_ab, its operands' orders exchanged; otherwise both as they are."""
        if not self.swap_ab:
            return problem, self
        kernel = dataclasses.replace(self, swap_ab=False, a_col=not self.b_col, b_col=not self.a_col)
        return type(problem)(problem.n, problem.m, problem.k, problem.batch), kernel

    def __post_init__(self):
        if self.instruction not in INSTRUCTIONS:
            raise ValueError(f"unknown instruction {self.instruction!r}; expected one of {INSTRUCTIONS}")

    @property
    def math_class(self) -> str:
        """Which datasheet peak the kernel runs against (gemmcompare.peaks.compute_class)."""
        cls = _peaks.compute_class({"a": self.input_dtype, "b": self.input_dtype, "acc": self.accumulator,
                                    "math": self.math})
        if cls is None:
            raise ValueError(f"no math class for {self.input_dtype} inputs with {self.accumulator} accumulate")
        return cls

    @property
    def block_resources(self) -> BlockResources | None:
        """The occupancy calculator's inputs, or None when the block size is unknown."""
        if self.threads_per_block is None:
            return None
        return BlockResources(threads=self.threads_per_block, registers_per_thread=self.registers_per_thread,
                              static_shared_bytes=self.static_shared_bytes,
                              dynamic_shared_bytes=self.dynamic_shared_bytes)


# The lab ladder (extensions/lab/*.cu): output tile per block (rows x cols, the K step) and block size.
# The scalar kernels' "tile" is the block's patch of outputs; threadIdx.x runs along M in the strided one.
LAB_KERNELS: dict[str, dict[str, Any]] = {
    "scalar_strided": {"block_tile": (16, 16, 1), "threads_per_block": 256, "instruction": "ffma"},
    "scalar_coalesced": {"block_tile": (8, 32, 1), "threads_per_block": 256, "instruction": "ffma"},
    "shared_16x16": {"block_tile": (16, 16, 16), "threads_per_block": 256, "instruction": "ffma"},
    "register_16x64": {"block_tile": (16, 64, 16), "threads_per_block": 256, "instruction": "ffma"},
    "register_2d": {"block_tile": (128, 128, 8), "threads_per_block": 256, "instruction": "ffma"},
    "wmma_global": {"block_tile": (32, 32, 16), "threads_per_block": 128, "instruction": "wmma"},
    "wmma_padded": {"block_tile": (16, 16, 16), "threads_per_block": 32, "instruction": "wmma",
                    "pad_to": (16, 16, 16)},
    # 128x128x32 block; warps = (128/WM) * (128/WN) for its warp_tile parameter
    "wmma_staged": {"block_tile": (128, 128, 32), "threads_per_block": None, "instruction": "wmma"},
}

_CONTRACT = re.compile(r"^(?P<a>f16|bf16|f32|f64|e4m3|e5m2)_(?:(?P<out>f16|bf16|f32)out_)?(?P<mode>f32acc|f16acc|strict|tf32)")
# an FP8 contract's name ends in its scaling (and _fastacc): e4m3_bf16out_f32acc_tn_block_fastacc
_LAYOUT = re.compile(r"_([tn])([tn])(?:_(?:tensor|rowcol|block)(?:_fastacc)?)?$")


def contract_dtypes(contract: str) -> dict[str, str]:
    """Input, output and accumulator dtypes and math mode from a builtin contract's spelling
    (gemmcompare.contracts.precision): 'f16_f32acc_tn', 'bf16_bf16out_f32acc_tt', 'f16_f16acc_tn',
    'f32_strict_tt', 'f32_tf32_tn'. Raises ValueError for other spellings."""
    m = _CONTRACT.match(contract or "")
    if not m:
        raise ValueError(f"cannot read dtypes from contract {contract!r}")
    a, out, mode = m.group("a"), m.group("out"), m.group("mode")
    if mode == "f16acc":
        return {"input": a, "output": a, "accumulator": "f16", "math": "strict"}
    if mode in ("strict", "tf32"):
        return {"input": a, "output": a, "accumulator": a, "math": mode}
    return {"input": a, "output": out or "f32", "accumulator": "f32", "math": "strict"}


def contract_orders(contract: str) -> tuple[bool, bool]:
    """(A column-major, B column-major) from a contract's layout letters ('..._tn': A row-major, B
    column-major); (False, False) when the spelling carries none."""
    m = _LAYOUT.search(contract or "")
    return (m.group(1) == "n", m.group(2) == "n") if m else (False, False)


def _mapping(row: Any) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    if dataclasses.is_dataclass(row):
        return {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
    raise TypeError(f"a row is a dict or a Result, not {type(row).__name__}")


def _params(row: Mapping[str, Any]) -> dict[str, Any]:
    params = row.get("params") or {}
    if isinstance(params, str):
        params = json.loads(params) if params.strip() else {}
    return dict(params)


def _stages(params: Mapping[str, Any]) -> int | None:
    value = params.get("stages")
    return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else None


def _int_or_none(value) -> int | None:
    if value is None or value == "":
        return None
    number = float(value)
    return None if number != number else int(number)  # NaN: a missing value read through pandas


def kernel_from_row(row: Any) -> KernelShape:
    """The KernelShape a result row (a Result or its record) describes. Raises ValueError with the reason
    when the row does not say enough (custom kernels, unknown families or contracts)."""
    row = _mapping(row)
    family, name = row.get("family") or "", row.get("implementation") or ""
    params = _params(row)
    dtypes = contract_dtypes(row.get("contract") or "")
    registers = _int_or_none(row.get("registers"))
    smem = _int_or_none(row.get("smem_bytes")) or 0
    a_col, b_col = contract_orders(row.get("contract") or "")
    base = dict(name=name, input_dtype=dtypes["input"], output_dtype=dtypes["output"],
                accumulator=dtypes["accumulator"], math=dtypes["math"], registers_per_thread=registers,
                dynamic_shared_bytes=smem, a_col=a_col, b_col=b_col)
    # smem_bytes is static + dynamic; the occupancy calculator counts their sum (the launchers opt in).

    if family == "library":
        return KernelShape(instruction="library", **{**base, "registers_per_thread": None, "dynamic_shared_bytes": 0},
                           notes=("library kernel: tile, block and raster unknown; no wave quantization modelled",))
    if family == "lab":
        variant = name.split(".", 1)[-1].split("[", 1)[0]
        if variant not in LAB_KERNELS:
            raise ValueError(f"lab kernel {variant!r} is not in LAB_KERNELS")
        spec = dict(LAB_KERNELS[variant], lab_loop=variant)
        if variant == "wmma_staged":
            wm, wn = params.get("warp_tile") or (32, 64)
            spec["threads_per_block"] = 32 * (128 // wm) * (128 // wn)
            spec["warp_tile"] = (int(wm), int(wn))
        return KernelShape(**base, **spec)
    if family == "mma_sync":
        block = tuple(params["block"])
        warps = int(params.get("warps") or 8)
        acc = params.get("acc") or "f32"
        return KernelShape(**{**base, "accumulator": acc}, instruction="mma_sync", block_tile=block,
                           threads_per_block=32 * warps, raster_group=int(params.get("group") or 1),
                           persistent=params.get("grid") == "persistent", stages=_stages(params))
    if family == "cutlass":
        return _cutlass_kernel(base, params)
    if family == "hopper":
        return _hopper_kernel(base, name, params)
    raise ValueError(f"family {family!r}: the model does not know this kernel's tile and block size")


def _hopper_kernel(base: dict[str, Any], name: str, p: dict[str, Any]) -> KernelShape:
    """The hand-written Hopper ladder (implementations/hopper.py): wgmma from shared memory; steps 1-2 are one
    warpgroup of 128 threads, steps 3-6 add a producer warpgroup to their consumers; persistent from step 4."""
    step = name.split(".", 1)[-1].split("[", 1)[0]
    consumers = int(p.get("consumers") or 1)
    specialized = step not in ("wgmma_tma", "pipelined")
    return KernelShape(**base, instruction="wgmma", block_tile=tuple(p["block"]),
                       threads_per_block=128 * (consumers + (1 if specialized else 0)),
                       raster_group=int(p.get("group") or 1), cluster=(int(p.get("cluster_m") or 1), 1),
                       persistent=step in ("persistent", "cluster", "best", "stream_k"), stages=_stages(p),
                       # stream_k's schedules other than data_parallel balance the last wave (auto: where it is
                       # under 80% full, which is where the wave model would charge for it)
                       stream_k=step == "stream_k" and p.get("schedule", "auto") != "data_parallel")


def _cutlass_kernel(base: dict[str, Any], p: dict[str, Any]) -> KernelShape:
    fam = p.get("template") or p.get("family")  # rows before the structure issue say `family`
    tile = tuple(p["tile"])
    dtype = p.get("dtype", base["input_dtype"])
    base = {**base, "input_dtype": "f32" if dtype == "tf32" else dtype, "math": "tf32" if dtype == "tf32" else
            ("strict" if dtype == "f32" else base["math"]), "accumulator": p.get("acc", base["accumulator"]),
            "output_dtype": p.get("out", base["output_dtype"])}
    group = int(p.get("swizzle") or 1)
    if fam == "sm80":
        warp = tuple(p["warp"])
        threads = 32 * (tile[0] // warp[0]) * (tile[1] // warp[1]) * (tile[2] // warp[2])
        simt = tuple(p.get("instruction") or ()) == (1, 1, 1)
        slices = int(p.get("slices") or 1) if p.get("split_k", "none") != "none" else 1
        return KernelShape(**base, instruction="ffma" if simt else "mma_sync", block_tile=tile,
                           threads_per_block=threads, raster_group=group, split_k=slices, stages=_stages(p),
                           notes=("GemmIdentityThreadblockSwizzle<N> modelled as a raster group of N",))
    if fam == "cute_sm80":
        wm, wn = p["warps"]
        return KernelShape(**base, instruction="mma_sync", block_tile=tile, threads_per_block=32 * wm * wn,
                           raster_group=group, stages=_stages(p))
    if fam == "cute_sm90":  # a producer warpgroup and persistent CTAs when warp-specialized
        specialized = p.get("schedule", "warp_specialized") == "warp_specialized"
        return KernelShape(**base, instruction="wgmma", block_tile=tile,
                           threads_per_block=128 * (int(p.get("consumers") or 2) + (1 if specialized else 0)),
                           raster_group=group, persistent=specialized, stages=_stages(p))
    if fam in ("sm90", "sm90_fp8"):  # sm90_fp8: the sm90 kernel with FP8 operands (dtype e4m3/e5m2)
        schedule = p.get("schedule", "cooperative")
        threads = 256 if schedule == "tma_ws" else 384  # one producer warp group + one or two consumers
        stream_k = p.get("scheduler") == "stream_k" and p.get("decomposition", "heuristic") in ("heuristic", "stream_k")
        split = int(p.get("splits") or 1) if p.get("decomposition") == "split_k" else 1
        return KernelShape(**base, instruction="wgmma", block_tile=tile, threads_per_block=threads,
                           raster_group=group, raster_along="m" if p.get("raster") == "along_m" else "n",
                           cluster=tuple(p.get("cluster") or (1, 1)), persistent=True, stream_k=stream_k,
                           split_k=split, stages=_stages(p), swap_ab=bool(p.get("swap_ab")))
    raise ValueError(f"CUTLASS family {fam!r} is not modelled")
