"""Propose configurations from cutlass_library's own kernel generator.

`cutlass_library.generator` is what CUTLASS's CMake build runs to decide which kernels the CUTLASS
profiler instantiates. We run its GEMM generator functions for one architecture into a Manifest, keep the
operations gemmcompare can render (dtype, schedules, scheduler and layouts it knows), translate each
into a configuration of our kernel templates, drop duplicates and whatever our validation rejects, and write
the rest as YAML a user can edit and drop into cutlass_configs/.

Layouts: the generator emits column-major C; gemmcompare's C is row-major. An entry keeps the
generator's A/B layouts and tile choices as proposals for the same layouts with row-major C.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Iterable

from .config import ConfigError, GemmConfig, Sm80Config, Sm90Config

# Generator functions per architecture: (function name in cutlass_library.generator, what it makes).
GENERATORS: dict[str, tuple[str, ...]] = {
    "sm80": (
        "GenerateSM80_TensorOp_16816",            # f16 / bf16 tensor ops
        "GenerateSM80_TensorOp_1688",             # tf32 tensor ops (data already tf32)
        "GenerateSM80_TensorOp_1688_fast_math",   # f32 data on tf32 tensor cores
        "GenerateSM80_Simt_f32",                  # strict FP32
    ),
    "sm90": (
        "GenerateSM90_TensorOp_16b_WGMMA_gemm",   # f16 / bf16 wgmma
        "GenerateSM90_TensorOp_tf32_WGMMA_gemm",  # tf32 wgmma
    ),
}

# arch argument -> (our kernel template, the generator's architecture string)
ARCHES: dict[int, tuple[str, str]] = {80: ("sm80", "80"), 86: ("sm80", "86"), 89: ("sm80", "89"), 90: ("sm90", "90a")}


@dataclass
class Enumeration:
    template: str
    arch: int
    configs: list[GemmConfig] = field(default_factory=list)
    generated: int = 0  # operations the generator produced for these functions
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def _generator_operations(arch: int, kernels: str) -> Iterable[Any]:
    from cutlass_library import generator
    from cutlass_library.manifest import Manifest

    template, arch_text = ARCHES[arch]
    for name in ("cutlass_library.generator", "cutlass_library.manifest"):
        logging.getLogger(name).setLevel(logging.WARNING)
    args = generator.define_parser().parse_args(
        ["--architectures", arch_text, "--operations", "gemm", "--kernels", "all" if kernels == "all" else ""])
    manifest = Manifest(args)
    cuda_version = _cuda_version()
    for fn in GENERATORS[template]:
        getattr(generator, fn)(manifest, cuda_version)
    for per_cc in manifest.operations.values():
        for per_name in per_cc.values():
            for ops in per_name.values():
                yield from ops


def _cuda_version() -> str:
    try:
        from ..build.toolchain import nvcc_version

        return nvcc_version() + ".0"
    except Exception:  # no toolkit: the generator only uses it to gate features of old toolkits
        return "12.8.0"


def _layout(op, L) -> str:
    letter = {L.LayoutType.RowMajor: "t", L.LayoutType.ColumnMajor: "n"}
    return letter[op.A.layout] + letter[op.B.layout]


def _dtype(op, L) -> str | None:
    """Our dtype name for an operation's A/B types and math, or None if we cannot honour it."""
    inst = op.tile_description.math_instruction
    a = op.A.element
    if a in (L.DataType.f16, L.DataType.bf16, L.DataType.tf32):
        return L.DataTypeNames[a]
    if a == L.DataType.f32:
        if inst.opcode_class == L.OpcodeClass.Simt:
            return "f32"
        if inst.math_operation == L.MathOperation.multiply_add:
            return "tf32"
    return None


def _sm90_fields(op, L) -> dict[str, Any] | str:
    if op.gemm_kind != L.GemmKind.Universal3x:
        return "not a plain universal GEMM"
    schedules = {
        L.KernelScheduleType.TmaWarpSpecialized: "tma_ws",
        L.KernelScheduleType.TmaWarpSpecializedCooperative: "cooperative",
        L.KernelScheduleType.TmaWarpSpecializedPingpong: "pingpong",
    }
    epilogues = {
        L.EpilogueScheduleType.NoSmemWarpSpecialized: "nosmem",
        L.EpilogueScheduleType.TmaWarpSpecialized: "tma",
        L.EpilogueScheduleType.TmaWarpSpecializedCooperative: "tma",
    }
    schedulers = {L.TileSchedulerType.Default: "persistent", L.TileSchedulerType.Persistent: "persistent",
                  L.TileSchedulerType.StreamK: "stream_k"}
    if op.kernel_schedule not in schedules:
        return f"kernel schedule {op.kernel_schedule.name}"
    if op.epilogue_schedule not in epilogues:
        return f"epilogue schedule {op.epilogue_schedule.name}"
    if op.tile_scheduler not in schedulers:
        return f"tile scheduler {op.tile_scheduler.name}"
    td = op.tile_description
    if td.cluster_shape[2] != 1:
        return "cluster K > 1"
    return {
        "tile": list(td.tile_shape),
        "cluster": list(td.cluster_shape[:2]),
        "schedule": schedules[op.kernel_schedule],
        "epilogue": epilogues[op.epilogue_schedule],
        "stages": "auto" if td.stages == 0 else td.stages,
        "scheduler": schedulers[op.tile_scheduler],
        "alignment": op.A.alignment,
    }


def _sm80_fields(op, L, arch: int) -> dict[str, Any] | str:
    if op.gemm_kind not in (L.GemmKind.Universal, L.GemmKind.Gemm):
        return "not a plain universal GEMM"
    swizzles = {L.SwizzlingFunctor.Identity1: 1, L.SwizzlingFunctor.Identity2: 2,
                L.SwizzlingFunctor.Identity4: 4, L.SwizzlingFunctor.Identity8: 8}
    if op.swizzling_functor not in swizzles:
        return f"swizzle {op.swizzling_functor.name}"
    td = op.tile_description
    tile = list(td.threadblock_shape)
    return {
        "tile": tile,
        "warp": [t // w for t, w in zip(tile, td.warp_count)],
        "instruction": list(td.math_instruction.instruction_shape),
        "stages": td.stages,
        "swizzle": swizzles[op.swizzling_functor],
        "alignment": op.A.alignment,
        "arch": arch,
    }


def enumerate_configs(arch: int, dtype: str, layout: str = "tn", out: str | None = None,
                      kernels: str = "all") -> Enumeration:
    """Configurations the CUTLASS generator proposes for `arch` and input `dtype` that we can render.

    layout: 'tn', 'tt', 'nn', 'nt' or 'all'; out: the output dtype to keep (None: every one it makes);
    kernels: 'all' (every kernel the generator can emit) or 'default' (CUTLASS's default build set).
    """
    if arch not in ARCHES:
        raise ConfigError(f"arch {arch}: expected one of {', '.join(map(str, ARCHES))}")
    from cutlass_library import library as L

    template = ARCHES[arch][0]
    cls = Sm90Config if template == "sm90" else Sm80Config
    result = Enumeration(template, arch)
    seen: set[str] = set()
    for op in _generator_operations(arch, kernels):
        result.generated += 1
        op_dtype = _dtype(op, L)
        if op_dtype != dtype:
            continue  # another dtype: not asked for, not counted as skipped
        op_layout = _layout(op, L)
        if layout != "all" and op_layout != layout:
            continue
        d = L.DataTypeNames.get(op.D.element)
        if out is not None and d != out:
            continue
        fields = _sm90_fields(op, L) if template == "sm90" else _sm80_fields(op, L, arch)
        if isinstance(fields, str):
            result.skip(fields)
            continue
        acc = L.DataTypeNames[op.tile_description.math_instruction.element_accumulator]
        fields.update(dtype=dtype, out=d, acc=acc, layout=op_layout)
        try:
            config = cls.from_fields(fields)
        except ConfigError as exc:
            result.skip(f"rejected by gemmcompare: {exc}")
            continue
        if config.procedural_name in seen:
            continue
        seen.add(config.procedural_name)
        result.configs.append(config)
    return result


def _yaml_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return str(value)


def to_yaml(result: Enumeration, command: str) -> str:
    """The enumeration as a cutlass_configs/ file: every field spelled out, one entry per configuration."""
    try:
        from importlib.metadata import version

        cutlass_version = version("nvidia-cutlass")
    except Exception:
        cutlass_version = "unknown"
    lines = [
        f"# Proposed by `{command}`",
        f"# from cutlass_library {cutlass_version}'s generator ({', '.join(GENERATORS[result.template])}):",
        f"# {result.generated} generated operations, {len(result.configs)} renderable configurations kept.",
    ]
    for reason, count in sorted(result.skipped.items()):
        lines.append(f"# skipped {count}: {reason}")
    lines += [
        "# Edit freely: rename entries, drop the ones you do not want, then move the file into cutlass_configs/.",
        f"template: {result.template}",
        "configs:" if result.configs else "configs: {}",
    ]
    for config in result.configs:
        lines.append(f"  {config.procedural_name}:")
        for name, value in config.as_fields().items():
            lines.append(f"    {name}: {_yaml_value(value)}")
    return "\n".join(lines) + "\n"
