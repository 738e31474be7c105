"""Compile tests (nvcc, no GPU) of the two kernels issue 14's checks run: the %globaltimer spin kernel every
timing method is checked against, and the planted-slowdown GEMM with and without its planted work, compiled
exactly as a JIT build compiles them (each one's own build request: flags, include folders, arch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas
from gemmcompare.profilers.spin import spin_request
from gemmcompare.spec import load_spec

pytestmark = pytest.mark.compile
PLANTED = Path(__file__).resolve().parents[1] / "experiments" / "studies" / "regressions" / "planted_slowdown"


def _compile(req, tmp_path: Path):
    out = []
    for src in req.sources:
        res = toolchain.compile_object(Path(src.path), req.arch, tmp_path / (src.filename + ".o"),
                                       extra_flags=req.cuda_flags, include_dirs=req.include_dirs)
        log = res.stdout + res.stderr
        assert res.returncode == 0, f"{src.filename} ({req.arch}, {req.cuda_flags}):\n{log[-3000:]}"
        out.append(parse_ptxas(log))
    return out


def test_spin_kernel_compiles_for_sm90(tmp_path, nvcc):
    (kernels,) = _compile(spin_request("sm_90"), tmp_path)
    assert any("spin_kernel" in k["demangled"] for k in kernels)


@pytest.mark.parametrize("spec", ["base.yaml", "slow.yaml"])
def test_planted_gemm_compiles_with_and_without_its_planted_work(spec, tmp_path, nvcc):
    exp = load_spec(PLANTED / spec)
    impl = next(i for i in exp.implementations if i.name == "custom.planted_gemm")
    req = impl.build_request(impl.target_arch(90))
    assert ("-DPLANTED_EXTRA_PERCENT=10" in req.cuda_flags) == (spec == "slow.yaml")
    (kernels,) = _compile(req, tmp_path)
    assert kernels and not any(k["spill_stores"] or k["spill_loads"] for k in kernels)
