"""The device table: datasheet rates (reconciled with gemmcompare.peaks), per-SM limits, live overrides,
and the issue-rate ceilings."""

import pytest

from gemmcompare import peaks
from gemmcompare.device import DeviceInfo
from gemmcompare.model.ceilings import issue_ceiling
from gemmcompare.model.devices import (
    DEVICES, MATH_CLASSES, architecture_limits, device_from_properties, device_spec, with_live_properties,
)
from gemmcompare.model.roofline import ridge_intensity

REQUIRED_KEYS = ("a100_sxm_80gb", "h100_sxm", "h200_sxm", "l4", "rtx_4090", "b200")


def test_the_table_has_the_six_products_with_every_field_and_a_source():
    assert set(REQUIRED_KEYS) <= set(DEVICES)
    for key in REQUIRED_KEYS:
        d = DEVICES[key]
        assert d.sm_count > 0 and d.l2_bytes > 0 and d.memory_bytes > 0 and d.memory_bandwidth > 0
        for cls in ("f32_simt", "tf32_tensor", "f16_tensor", "f16_tensor_f16acc"):
            assert d.peak(cls) > 0, (key, cls)
        assert set(d.peak_tflops) <= set(MATH_CLASSES)
        for what in ("rates", "bandwidth", "sm_count", "l2_bytes", "limits"):
            assert d.sources[what], (key, what)
        lim = d.limits
        assert lim.register_allocation_unit == 256 and lim.reserved_shared_memory_per_block == 1024
        assert lim.registers_per_sm == 65536 and lim.max_threads_per_block == 1024


def test_rates_are_the_peaks_table_wherever_it_has_the_product():
    contracts = {"f16_tensor": {"a": "f16", "acc": "f32"}, "f16_tensor_f16acc": {"a": "f16", "acc": "f16"},
                 "tf32_tensor": {"a": "f32", "math": "tf32"}, "f32_simt": {"a": "f32", "math": "strict"}}
    for key in ("a100_sxm_80gb", "h100_sxm", "h200_sxm", "rtx_4090", "b200"):
        d = DEVICES[key]
        for cls, contract in contracts.items():
            assert peaks.peak_for(d.name, contract) == (d.peak(cls), d.memory_bandwidth), (key, cls)
    assert peaks.device_peaks("NVIDIA L4") is None  # why the L4 carries its own figures


def test_geforce_ada_halves_the_fp32_accumulate_tensor_rate_and_datacenter_parts_do_not():
    g = DEVICES["rtx_4090"]
    assert g.peak("f16_tensor_f16acc") / g.peak("f16_tensor") == pytest.approx(2, rel=1e-3)
    # seed 001: 512 FLOP/clk/SM with FP32 accumulate on GeForce Ada; 128 SMs at 2520 MHz
    assert 128 * 2520e6 * 512 / 1e12 == pytest.approx(g.peak("f16_tensor"), rel=1e-3)
    for key in ("a100_sxm_80gb", "h100_sxm", "h200_sxm", "l4", "b200"):
        d = DEVICES[key]
        assert d.peak("f16_tensor_f16acc") == d.peak("f16_tensor"), key


def test_rates_agree_with_sm_count_times_clock_times_per_clock_rate():
    a100 = DEVICES["a100_sxm_80gb"]
    # 108 SMs x 1.41 GHz x 2048 dense FP16 FLOP/clk/SM = 311.9 TFLOP/s
    assert a100.sm_count * a100.boost_clock_mhz * 1e6 * 2048 / 1e12 == pytest.approx(a100.peak("f16_tensor"), rel=1e-3)
    # seed 004's exercise: 312 TFLOP/s is ~3.8e10 16x16x16 WMMA ops per second, ~0.25 per SM per cycle
    per_second = a100.peak("f16_tensor") * 1e12 / 8192
    assert f"{per_second:.1e}" == "3.8e+10"
    assert round(per_second / (a100.sm_count * a100.boost_clock_mhz * 1e6), 2) == 0.25
    l4 = DEVICES["l4"]
    assert l4.sm_count * l4.boost_clock_mhz * 1e6 * 1024 / 1e12 == pytest.approx(l4.peak("f16_tensor"), rel=2e-3)
    assert l4.sm_count * 128 * 2 * l4.boost_clock_mhz * 1e6 / 1e12 == pytest.approx(l4.peak("f32_simt"), rel=2e-3)


def test_h200_is_an_h100_with_more_bandwidth_and_the_ridge_points_move():
    h100, h200 = DEVICES["h100_sxm"], DEVICES["h200_sxm"]
    assert h200.peak_tflops == h100.peak_tflops and h200.sm_count == h100.sm_count == 132
    assert h200.memory_bandwidth == 4.8e12 and h100.memory_bandwidth == 3.35e12
    assert round(h200.ridge_intensity("f16_tensor")) == 206  # library/device/H200.md: about 206 FLOP/B
    assert round(h100.ridge_intensity("f16_tensor")) == 295
    a100 = DEVICES["a100_sxm_80gb"]
    assert round(a100.ridge_intensity("f32_simt"), 2) == 9.56  # seed 000's FP32 knee
    assert round(a100.ridge_intensity("f16_tensor"), 1) == 153.0  # and its dense FP16 knee
    assert ridge_intensity(19.5, 2039e9) == a100.ridge_intensity("f32_simt")


def test_per_sm_limits_by_compute_capability():
    assert DEVICES["h200_sxm"].limits.max_warps_per_sm == 64 and DEVICES["l4"].limits.max_warps_per_sm == 48
    assert DEVICES["a100_sxm_80gb"].limits.shared_memory_per_sm == 164 * 1024
    assert DEVICES["a100_sxm_80gb"].limits.shared_memory_per_block_optin == 163 * 1024
    assert DEVICES["h200_sxm"].limits.shared_memory_per_block_optin == 227 * 1024 == 232448
    assert DEVICES["rtx_4090"].limits.shared_memory_per_block_optin == 99 * 1024 == 101376
    assert DEVICES["b200"].limits.max_blocks_per_sm == 32 and DEVICES["rtx_4090"].limits.max_blocks_per_sm == 24
    with pytest.raises(KeyError):
        architecture_limits((7, 0))


@pytest.mark.parametrize("name, key", [
    ("NVIDIA H200", "h200_sxm"), ("NVIDIA A100-SXM4-80GB", "a100_sxm_80gb"), ("NVIDIA H100 80GB HBM3", "h100_sxm"),
    ("NVIDIA L4", "l4"), ("NVIDIA GeForce RTX 4090", "rtx_4090"), ("NVIDIA B200", "b200"), ("h200_sxm", "h200_sxm"),
    ("NVIDIA A100-SXM4-40GB", None), ("NVIDIA A100 80GB PCIe", None), ("NVIDIA H100 PCIe", None),
    ("NVIDIA H200 NVL", None), ("NVIDIA L40S", None), ("NVIDIA GB200", None), ("", None),
])
def test_device_names_find_their_entry_and_other_variants_none(name, key):
    spec = device_spec(name)
    assert (spec.key if spec else None) == key


def test_a_live_device_overrides_what_it_reports():
    torch_like = {"name": "NVIDIA H200", "multi_processor_count": 132, "L2_cache_size": 50 * 2**20,
                  "total_memory": 150754820096, "major": 9, "minor": 0, "regs_per_multiprocessor": 65536,
                  "max_threads_per_multi_processor": 2048}
    live = device_from_properties(torch_like)
    assert live.key == "h200_sxm" and live.l2_bytes == 50 * 2**20 and live.memory_bytes == 150754820096
    assert live.peak_tflops == DEVICES["h200_sxm"].peak_tflops  # rates stay the datasheet's
    assert {"sm_count", "l2_bytes", "memory_bytes", "limits.registers_per_sm"} <= set(live.overridden)
    assert live.sources["l2_bytes"] == "live device report"
    fewer = with_live_properties(DEVICES["h200_sxm"], {"multi_processor_count": 114})  # e.g. a MIG-like slice
    assert fewer.sm_count == 114 and fewer.overridden == ("sm_count",)
    assert DEVICES["h200_sxm"].sm_count == 132  # the table itself is untouched


def test_a_device_info_and_an_unknown_product_work_from_their_compute_capability():
    info = DeviceInfo(name="NVIDIA RTX A6000", cc=(8, 6), sm_count=84, l2_bytes=6 * 2**20, total_memory_bytes=48 * 2**30)
    spec = device_from_properties(info)
    assert spec.sm_count == 84 and spec.limits.max_blocks_per_sm == 16 and spec.peak_tflops == {}
    with pytest.raises(ValueError):
        with_live_properties(None, {"name": "mystery"})


def test_issue_ceilings_measured_on_the_h200_and_their_fallbacks():
    h200, b200, a100 = DEVICES["h200_sxm"], DEVICES["b200"], DEVICES["a100_sxm_80gb"]
    mma = issue_ceiling(h200, "mma_sync", "f16_tensor")
    assert mma.tflops == 630.0 and mma.measured and round(mma.fraction_of_peak, 2) == 0.64
    assert issue_ceiling(h200, "mma_sync", "f16_tensor_f16acc").tflops == 645.0  # same rate on datacenter parts
    assert issue_ceiling(h200, "wmma", "f16_tensor").tflops == 630.0  # WMMA lowers to the same HMMA
    assert issue_ceiling(h200, "ffma", "f32_simt").tflops == 55.5
    wgmma = issue_ceiling(h200, "wgmma", "f16_tensor")
    assert wgmma.tflops == 790.0 and wgmma.measured and "random" in wgmma.source  # not the datasheet's 989.4
    library = issue_ceiling(h200, "library", "f16_tensor")
    assert library.tflops == 790.0 and "wgmma" in library.source  # cuBLAS runs wgmma
    assert issue_ceiling(h200, "library", "f32_simt").tflops == 55.5  # strict FP32 runs on FFMA, library or not
    assert issue_ceiling(h200, "wgmma", "tf32_tensor").tflops == h200.peak("tf32_tensor")  # not measured
    assert issue_ceiling(a100, "library", "f16_tensor").tflops == 312.0
    assert issue_ceiling(a100, "mma_sync", "f16_tensor").tflops == 312.0  # native on sm_80
    fallback = issue_ceiling(b200, "mma_sync", "f16_tensor")
    assert fallback.tflops == b200.peak("f16_tensor") and not fallback.measured and "assumed" in fallback.source
    with pytest.raises(ValueError):
        issue_ceiling(a100, "wgmma", "f16_tensor")
    with pytest.raises(ValueError):
        issue_ceiling(h200, "tcgen05", "f16_tensor")
    with pytest.raises(ValueError):
        issue_ceiling(h200, "mma_sync", "f32_simt")
    with pytest.raises(ValueError):
        issue_ceiling(DEVICES["l4"], "ffma", "f64")  # the L4 row has no FP64 rate
