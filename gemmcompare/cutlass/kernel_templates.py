"""The kernel templates: one table row per kernel template, everything gemmcompare knows about it.

A row names the kernel template's configuration dataclass (its fields and rules, config/), its two templates
(cutlass_configs/templates/), the function that fills the kernel template's own placeholders (the common ones are
in render.common_values), and the pattern of its kernels' names in the ptxas report.

Adding a template = its templates + one row here (+ a dataclass in config/ if its fields are new; a
kernel template with the fields of an existing one subclasses it and changes TEMPLATE and NAME_PREFIX). See docs/cutlass.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..contracts.precision import Scaling
from . import tags
from .config import (ConfigError, CuteSm80Config, CuteSm90Config, GemmConfig, Sm80Config, Sm90Config, Sm90Fp8Config, Sm90GroupedConfig,
                     Sm90GroupedFp8Config)


# -- each kernel template's own placeholder values (C++ spellings come from tags.py) ---------------------------------


def _sm80_values(c: Sm80Config) -> dict[str, object]:
    wm, wn, wk = c.warp
    im, in_, ik = c.instruction
    return {
        "warp_m": wm, "warp_n": wn, "warp_k": wk,
        "inst_m": im, "inst_n": in_, "inst_k": ik,
        "opclass": tags.SM80_OPCLASS[c.opclass],
        "arch_tag": tags.ARCH_TAG[80],  # SM86/89/90 run the SM80 kernels; the arch field only sets the budget
        "math_operator": tags.SM80_MATH_OPERATOR,
        "swizzle": tags.sm80_swizzle(c.swizzle),
        "stages": c.stages,
        "alignment": c.alignment,
        "alignment_c": c.c_alignment,
        "alignment_partial": c.partial_alignment,
        "split_k": c.split_k,
        "split_k_mode": tags.SM80_SPLIT_K[c.split_k],
        "slices": c.slices,
    }


def _sm90_common_values(c: Sm90Config | Sm90GroupedConfig) -> dict[str, object]:
    """What the dense and the grouped SM90 templates fill alike: the cluster, stages, alignments, raster, swizzle."""
    return {
        "cluster_m": c.cluster[0],
        "cluster_n": c.cluster[1],
        "stage_count": tags.sm90_stage_count(c.stages),
        "alignment": c.alignment,
        "alignment_d": c.d_alignment,
        "raster": c.raster,
        "raster_code": tags.SM90_RASTER[c.raster][0],
        "swizzle": c.swizzle,
    }


def _sm90_values(c: Sm90Config) -> dict[str, object]:
    schedule = tags.SM90_SCHEDULES[c.schedule]
    kernel_a, kernel_b, kernel_d = c.kernel_orders
    return {
        **_sm90_common_values(c),
        "swap_ab": "true" if c.swap_ab else "false",
        "kernel_layout_a": tags.LAYOUT_TAG[kernel_a],
        "kernel_layout_b": tags.LAYOUT_TAG[kernel_b],
        "kernel_layout_d": tags.LAYOUT_TAG[kernel_d],
        "kernel_schedule": schedule.kernel,
        "epilogue_schedule": schedule.tma_epilogue if c.epilogue == "tma" else tags.SM90_NOSMEM_EPILOGUE,
        "tile_scheduler": tags.SM90_TILE_SCHEDULERS[c.scheduler],
        "decomposition": c.decomposition,
        "decomposition_code": tags.SM90_DECOMPOSITION[c.decomposition][0],
        "splits": c.splits,
    }


def _sm90_fp8_values(c: Sm90Fp8Config) -> dict[str, object]:
    """sm90's values with the FP8 kernel schedule: the FP8FastAccum twin for accumulation fast; for promote the
    plain schedule, for which the CollectiveBuilder picks the promoting FP8 mainloop (tags.py); under block
    scaling the FP8BlockScaledAccum schedule and the scale blocks' granularity and majors."""
    values = _sm90_values(c)
    if c.scaling == "block":
        gm, gn, gk = c.BLOCK_SCALE_GRANULARITY
        schedule = tags.SM90_FP8_BLOCK_SCALED[c.schedule]
        blocks = {"scale_granularity_m": gm, "scale_granularity_n": gn, "scale_granularity_k": gk,
                  "scale_major_a": tags.SM90_FP8_BLOCK_SCALE_MAJOR["a"],
                  "scale_major_b": tags.SM90_FP8_BLOCK_SCALE_MAJOR["b"]}
    else:
        schedule = tags.SM90_FP8_FAST_ACCUM[c.schedule] if c.accumulation == "fast" else values["kernel_schedule"]
        blocks = {}
    return {**values, **blocks, "kernel_schedule": schedule, "accumulation": c.accumulation,
            "abi_scaling": f"GC_SCALING_{Scaling(c.scaling).name}"}


def _sm90_fp8_kernel_template(c: Sm90Fp8Config) -> str:
    """Block scales live in the mainloop (its arguments, layouts and schedule), per-tensor ones in the epilogue:
    two kernel TUs of one kernel template."""
    return "sm90_fp8_blockwise_kernel.cu.tmpl" if c.scaling == "block" else "sm90_fp8_kernel.cu.tmpl"


def _sm90_grouped_values(c: Sm90GroupedConfig) -> dict[str, object]:
    """The pointer-array schedules and their PtrArray TMA epilogues; raster and swizzle are the group scheduler's
    run-time arguments (it has no stream-K decomposition)."""
    schedule = tags.SM90_GROUPED_SCHEDULES[c.schedule]
    return {
        **_sm90_common_values(c),
        "kernel_schedule": schedule.kernel,
        "epilogue_schedule": schedule.tma_epilogue,
        "smem_capacity": tags.SMEM_CAPACITY[90],
    }


def _sm90_grouped_fp8_values(c: Sm90GroupedFp8Config) -> dict[str, object]:
    """The grouped values with the pointer-array blockwise FP8 schedule and the scale blocks' granularity and majors
    (the harness's row-major scales, read in place as sm90_fp8's blockwise kernel reads them)."""
    gm, gn, gk = c.BLOCK_SCALE_GRANULARITY
    return {**_sm90_grouped_values(c), "kernel_schedule": tags.SM90_GROUPED_FP8_BLOCK_SCALED[c.schedule],
            "scale_granularity_m": gm, "scale_granularity_n": gn, "scale_granularity_k": gk,
            "scale_major_a": tags.SM90_FP8_BLOCK_SCALE_MAJOR["a"], "scale_major_b": tags.SM90_FP8_BLOCK_SCALE_MAJOR["b"]}


def _cute_values(c: CuteSm80Config) -> dict[str, object]:
    order_a, order_b = c.orders
    return {
        "warps_m": c.warps[0],
        "warps_n": c.warps[1],
        "stages": c.stages,
        "mma_atom": tags.CUTE_MMA_ATOMS[(c.dtype, c.acc, c.atom)],
        "a_k_major": tags.cpp_bool(tags.k_major("a", order_a)),
        "b_k_major": tags.cpp_bool(tags.k_major("b", order_b)),
        "swizzle": c.swizzle,
    }


def _cute_sm90_values(c: CuteSm90Config) -> dict[str, object]:
    schedule = tags.CUTE_SM90_SCHEDULES[c.schedule]
    return {
        "schedule": c.schedule,
        "schedule_text": schedule.text,
        "warp_specialized": tags.cpp_bool(schedule.warp_specialized),
        "consumers": c.consumers,
        "stages": c.stages,
        "mma_atom": c.mma_atom,
        "swizzle": c.swizzle,
        "smem_bytes": c.smem_bytes(),  # checked against the kernel's own sizeof by a static_assert
        "threads": c.threads,
    }


@dataclass(frozen=True)
class KernelTemplate:
    config: type[GemmConfig]  # its fields, defaults and rules
    kernel_template: str  # -> <kernel_name>_kernel.cu: every template parameter (the expensive TU)
    entry_template: str  # -> <procedural_name>.cu: the ABI entry with the run-time arguments
    values: Callable[[GemmConfig], dict[str, object]]  # the kernel template's own placeholders
    kernel_filter: str  # regex matching its kernels' (mangled) names in the ptxas report
    # the kernel TU's template of one configuration, where its fields choose between several (else kernel_template)
    kernel_template_for: Callable[[GemmConfig], str] | None = None

    @property
    def name(self) -> str:
        return self.config.TEMPLATE

    def kernel_file(self, config: GemmConfig) -> str:
        """The template of `config`'s kernel TU."""
        return self.kernel_template_for(config) if self.kernel_template_for else self.kernel_template


TEMPLATES: dict[str, KernelTemplate] = {f.name: f for f in (
    KernelTemplate(Sm80Config, "sm80_kernel.cu.tmpl", "sm80_entry.cu.tmpl", _sm80_values, r"Kernel2|ReduceSplitK"),
    KernelTemplate(Sm90Config, "sm90_kernel.cu.tmpl", "sm90_entry.cu.tmpl", _sm90_values, r"device_kernel"),
    KernelTemplate(Sm90Fp8Config, "sm90_fp8_kernel.cu.tmpl", "sm90_entry.cu.tmpl", _sm90_fp8_values, r"device_kernel",
                   _sm90_fp8_kernel_template),
    # the grouped kernel TU also holds the small kernel that builds the per-group arguments on the device
    KernelTemplate(Sm90GroupedConfig, "sm90_grouped_kernel.cu.tmpl", "sm90_grouped_entry.cu.tmpl", _sm90_grouped_values,
                   r"device_kernel|gc_grouped_arguments_kernel"),
    KernelTemplate(Sm90GroupedFp8Config, "sm90_grouped_fp8_blockwise_kernel.cu.tmpl", "sm90_grouped_entry.cu.tmpl",
                   _sm90_grouped_fp8_values, r"device_kernel|gc_grouped_arguments_kernel"),
    KernelTemplate(CuteSm80Config, "cute_sm80_kernel.cu.tmpl", "cute_sm80_entry.cu.tmpl", _cute_values,
           r"cute_sm80_gemm_kernel"),
    KernelTemplate(CuteSm90Config, "cute_sm90_kernel.cu.tmpl", "cute_sm90_entry.cu.tmpl", _cute_sm90_values,
                   r"cute_sm90_gemm_kernel"),
)}


def kernel_template(name: str) -> KernelTemplate:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise ConfigError(f"unknown kernel template {name!r} (kernel templates: {', '.join(TEMPLATES)})") from None
