"""swap_ab, the SM90 kernel that computes D^T = B^T A^T for skinny M (CPU: fields, rendering, the model).

Its results are checked on the GPU like every CUTLASS row (tests/test_gpu_cutlass.py runs each catalog entry
under the correctness contract); here: what it accepts, what it renders and how the model prices it."""

from __future__ import annotations

import pytest

from gemmcompare.contracts.precision import Order
from gemmcompare.cutlass import render
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.cutlass.config import ConfigError, Sm90Config, Sm90Fp8Config
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.model.devices import device_spec
from gemmcompare.model.kernels import kernel_from_row
from gemmcompare.model.predict import predict
from gemmcompare.problems import GemmProblem

SWAPPED = "sm90_coop_swapab_splitk4_128x16x128_c1x1"


def _config(**fields):
    base = {"dtype": "bf16", "out": "bf16", "tile": [128, 16, 128], "schedule": "cooperative"}
    return Sm90Config.from_fields({**base, **fields})


def test_swap_ab_is_a_boolean_field():
    assert _config(swap_ab=True).swap_ab is True
    assert _config().swap_ab is False
    for bad in ("yes", 1, "true"):
        with pytest.raises(ConfigError, match="swap_ab: expected true or false"):
            _config(swap_ab=bad)


def test_swapped_kernel_exchanges_the_operands_layouts():
    # tn: A row-major (K-major), B column-major (K-major); swapped, the kernel's A is B^T (K-major: row-major),
    # its B is A^T (K-major: column-major) and its D is C^T, column-major
    assert _config(swap_ab=True).kernel_orders == (Order.ROW, Order.COL, Order.COL)
    assert _config().kernel_orders == (Order.ROW, Order.COL, Order.ROW)
    nt = _config(swap_ab=True, layout="nt")  # A column-major (M-major), B row-major (N-major)
    assert nt.kernel_orders == (Order.COL, Order.ROW, Order.COL)


def test_swapped_kernel_renders_its_own_layouts_and_swaps_the_arguments():
    kernel, entry = render.render(lookup(SWAPPED).config)
    assert "constexpr bool kSwapAB = true;" in kernel.text
    assert "using LayoutD = cutlass::layout::ColumnMajor;" in kernel.text
    assert "using LayoutA = cutlass::layout::RowMajor;" in kernel.text
    assert "using LayoutB = cutlass::layout::ColumnMajor;" in kernel.text
    assert "kSwapAB ? args->b : args->a" in kernel.text
    plain, _ = render.render(lookup("sm90_coop_128x256x64_c1x1").config)
    assert "constexpr bool kSwapAB = false;" in plain.text
    assert "using LayoutD = cutlass::layout::RowMajor;" in plain.text


def test_swap_ab_is_part_of_the_kernel_name_only_when_set():
    swapped = lookup(SWAPPED).config
    assert swapped.kernel_name.endswith("_swapab")
    assert "swapab" not in lookup("sm90_coop_splitk4_128x128x64_c1x1").config.kernel_name
    # the four swapped 128x16x128 entries differ only in run-time arguments: one kernel TU
    names = {lookup(n).config.kernel_name for n in (
        "sm90_coop_swapab_streamk_128x16x128_c1x1", "sm90_coop_swapab_splitk2_128x16x128_c1x1",
        "sm90_coop_swapab_splitk4_128x16x128_c1x1", "sm90_coop_swapab_splitk8_128x16x128_c1x1")}
    assert len(names) == 1


def test_swap_ab_is_refused_where_it_is_not_built():
    with pytest.raises(ConfigError, match="swap_ab is built for f16 and bf16 only"):
        Sm90Config.from_fields({"dtype": "tf32", "tile": [128, 128, 32], "swap_ab": True})
    with pytest.raises(ConfigError, match="swap_ab"):  # not a field of the FP8 kernel template
        Sm90Fp8Config.from_fields({"swap_ab": True})


def _kernel(name: str):
    impl = CutlassKernel(lookup(name).config)
    return kernel_from_row({"family": "cutlass", "implementation": impl.name, "params": impl.params,
                            "contract": "bf16_bf16out_f32acc_tn"})


def test_model_prices_a_swapped_kernel_on_the_transposed_problem():
    device = device_spec("h200")
    swapped = predict(GemmProblem(16, 4096, 4096), _kernel(SWAPPED), device)
    # 4096 / 128 weight tiles x 1 token tile, each split in 4: 128 units for 132 SMs
    assert (swapped.waves.tiles_m, swapped.waves.tiles_n, swapped.waves.ctas) == (32, 1, 128)
    assert any("swapped" in note for note in swapped.notes)
    # an unswapped 128x16 tile on the same problem would be 1 x 256 tiles
    plain = predict(GemmProblem(16, 4096, 4096), _kernel("sm90_coop_splitk4_128x128x64_c1x1"), device)
    assert (plain.waves.tiles_m, plain.waves.tiles_n) == (1, 32)
