"""Render a configuration into C++: a pure function from a config to source text.

Templates live in cutlass_configs/templates/; they read like the C++ they produce, with `${name}`
placeholders filled by string.Template. Each kernel template's row in kernel templates.TEMPLATES names its two templates:

- `<kernel template>_kernel.cu.tmpl` -> `<kernel_name>_kernel.cu`: every template parameter; the expensive TU.
  It defines `gc_kernel_<kernel_name>(args, <run-time arguments>, err, err_len)`.
- `<kernel template>_entry.cu.tmpl` -> `<procedural_name>.cu`: the ABI entry `gc_cutlass_<procedural_name>`
  that calls the kernel with this configuration's run-time arguments. It includes only gemm_abi.h.

Configurations that differ only in run-time arguments render the same kernel TU (same file name, same
text), so a sweep over raster order or swizzle compiles each kernel once.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass

from ..paths import CUTLASS_TEMPLATES_DIR
from ..contracts.precision import Order, Scaling
from ..dtypes import FP8_DTYPES
from . import tags
from .config import GemmConfig
from .kernel_templates import kernel_template



@dataclass(frozen=True)
class RenderedSource:
    filename: str
    text: str


def kernel_symbol(config: GemmConfig) -> str:
    return f"gc_kernel_{config.kernel_name}"


def entry_symbol(config: GemmConfig) -> str:
    return f"gc_cutlass_{config.procedural_name}"


def kernel_filename(config: GemmConfig) -> str:
    return f"{config.kernel_name}_kernel.cu"


def entry_filename(config: GemmConfig) -> str:
    return f"{config.procedural_name}.cu"


@functools.lru_cache(maxsize=None)
def load_template(name: str) -> string.Template:
    return string.Template((CUTLASS_TEMPLATES_DIR / name).read_text())


def _order_name(order: Order) -> str:
    return "row-major" if order is Order.ROW else "column-major"


def contract_text(config: GemmConfig) -> str:
    """What a kernel computes, in words (for its banner and its wrong-contract error)."""
    order_a, order_b = config.orders
    text = (f"{config.dtype} in (A {_order_name(order_a)}, B {_order_name(order_b)}), "
            f"{config.out} out (row-major), {config.acc} accumulate, math {config.math.value}")
    if config.input_type.storage in FP8_DTYPES:
        scales = "1x128/128x128 block scales" if Scaling.BLOCK in config.scalings else "per-tensor scales"
        text += (f", {scales}, {'fast accumulation' if config.fast_accum else 'FP32 promotion'}")
    return text


def common_values(config: GemmConfig) -> dict[str, object]:
    template = config.TEMPLATE
    order_a, order_b = config.orders
    m, n, k = config.tile
    return {
        "kernel_name": config.kernel_name,
        "procedural_name": config.procedural_name,
        "kernel_symbol": kernel_symbol(config),
        "entry_symbol": entry_symbol(config),
        "contract_text": contract_text(config),
        "element_a": tags.element_tag(config.dtype, template),
        "element_b": tags.element_tag(config.dtype, template),
        "element_d": tags.element_tag(config.out, template),
        "element_accumulator": tags.element_tag(config.acc, template),
        "layout_a": tags.LAYOUT_TAG[order_a],
        "layout_b": tags.LAYOUT_TAG[order_b],
        "layout_a_name": _order_name(order_a),
        "layout_b_name": _order_name(order_b),
        "abi_dtype_in": tags.ABI_DTYPE[config.input_type.storage],
        "abi_dtype_out": tags.ABI_DTYPE[config.out_dtype],
        "abi_dtype_acc": tags.ABI_DTYPE[config.acc_dtype],
        "abi_math": tags.ABI_MATH[config.math],
        "abi_order_a": tags.ABI_ORDER[order_a],
        "abi_order_b": tags.ABI_ORDER[order_b],
        "tile_m": m,
        "tile_n": n,
        "tile_k": k,
    }


def values(config: GemmConfig) -> dict[str, object]:
    """Every placeholder value of a configuration's templates: the common ones and its kernel template's own."""
    fam = kernel_template(config.TEMPLATE)
    return {**common_values(config), **fam.values(config)}


def render(config: GemmConfig) -> tuple[RenderedSource, RenderedSource]:
    """(kernel TU, entry TU) of a validated configuration."""
    fam = kernel_template(config.TEMPLATE)
    v = values(config)
    return (
        RenderedSource(kernel_filename(config), load_template(fam.kernel_file(config)).substitute(v)),
        RenderedSource(entry_filename(config), load_template(fam.entry_template).substitute(v)),
    )
