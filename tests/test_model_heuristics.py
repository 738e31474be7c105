"""The optional nvidia-matmul-heuristics adapter: pure mappings always; the package itself when installed."""

import importlib

import pytest

from gemmcompare.model import heuristics
from gemmcompare.model.devices import DEVICES
from gemmcompare.model.kernels import KernelShape
from gemmcompare.problems import GemmProblem

P = GemmProblem(4096, 4096, 4096)
COOP = KernelShape("coop", "wgmma", "f16", "f32", "f32", block_tile=(128, 256, 64), threads_per_block=384,
                   registers_per_thread=168, stages=4)


@pytest.mark.parametrize("dtypes, expected", [
    (("f16", "f32", "f32", "strict"), "HSS"), (("f16", "f32", "f16", "strict"), "HSH"),
    (("f16", "f16", "f16", "strict"), "HHH"), (("bf16", "f32", "bf16", "strict"), "TST"),
    (("f32", "f32", "f32", "strict"), "SSS"), (("f32", "f32", "f32", "tf32"), "SFS"),
])
def test_precision_strings(dtypes, expected):
    assert heuristics.precision_string(*dtypes) == expected


def test_our_layout_letters_map_to_its_transposed_operand_letters():
    # ours: A then B, t = row-major; its row-major layouts name the operand stored transposed
    assert heuristics.LAYOUT_CODES == {"tt": 0, "tn": 1, "nt": 2, "nn": 3}
    assert set(heuristics.NVIDIA_GPUS) == set(DEVICES)


def test_everything_returns_none_without_the_package(monkeypatch):
    real = importlib.import_module

    def no_package(name, *args):
        if name == heuristics.MODULE:
            raise ImportError("not installed")
        return real(name, *args)

    monkeypatch.setattr(heuristics.importlib, "import_module", no_package)
    assert heuristics.estimate_kernel(P, COOP, DEVICES["h200_sxm"]) is None
    assert heuristics.suggest(P, device_key="h200_sxm", precision="HSS") is None
    assert heuristics.estimate(P, device_key="h200_sxm", precision="HSS", cta=(128, 256, 64), warp=(64, 64, 64),
                               instruction=(64, 8, 16), stages=4) is None


def test_kernels_it_cannot_describe_return_none_before_touching_it():
    lib = KernelShape("cublas", "library", "f16", "f32", "f32")
    simt = KernelShape("simt", "ffma", "f32", "f32", "f32", block_tile=(128, 128, 8), threads_per_block=256)
    assert heuristics.estimate_kernel(P, lib, DEVICES["h200_sxm"]) is None
    assert heuristics.estimate_kernel(P, simt, DEVICES["h200_sxm"]) is None


def test_the_package_when_installed():
    if not heuristics.available():
        pytest.skip("nvidia-matmul-heuristics is not installed (optional)")
    est = heuristics.estimate_kernel(P, COOP, DEVICES["h200_sxm"])
    assert est is not None and est.target == "cutlass3" and est.precision == "HSS" and not est.calibrated
    assert 0.1 < est.runtime_ms < 0.5 and est.compute_ms > 0
    k32 = KernelShape("k32", "wgmma", "f16", "f32", "f32", block_tile=(128, 256, 32), threads_per_block=384, stages=6)
    assert heuristics.estimate_kernel(P, k32, DEVICES["h200_sxm"]) is None  # CUTLASS3 target rejects tile K 32
    picks = heuristics.suggest(P, device_key="h200_sxm", precision="HSS", count=2)
    assert picks and all(p["runtime_ms"] > 0 for p in picks)
