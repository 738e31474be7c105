"""nvcc compile tests of the CUTLASS SM90 grouped (pointer-array) kernel template: no GPU needed, slow (marked
`compile`).

One cooperative and one ping-pong configuration, one of each grouped kernel template (the cooperative one FP8 with
block scales, sm90_grouped_fp8; the ping-pong one BF16, sm90_grouped), each kernel TU and entry TU compiled for
sm_90a with toolchain.compile_object exactly as the JIT build compiles them, all four TUs in parallel in one module
fixture (one nvcc per core). Kept to two cases because each kernel TU costs a minute or more of CI (timings in
docs/cutlass.md, "Grouped GEMM (SM90, pointer-array)"): both schedules and both templates compile, and the other
catalog entries differ from these only in tile, cluster and element types, which tests/test_cutlass_grouped.py
checks in the rendered text.
"""

from __future__ import annotations

import re

import pytest

from gemmcompare.build.ptxas import parse_ptxas
from gemmcompare.cutlass import tags
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.cutlass.kernel_templates import kernel_template

from cutlass_compiling import compile_cases, tu_output

pytestmark = pytest.mark.compile

ARCH = "sm_90a"
CASES = [
    # KernelPtrArrayTmaWarpSpecializedCooperativeFP8BlockScaledAccum: 2 consumer warp groups on a tile, scales per group
    "sm90_grouped_fp8_blockwise_coop_128x128x128_c1x1",
    "sm90_grouped_pp_64x128x64_c2x1",  # KernelPtrArrayTmaWarpSpecializedPingpong, BF16, a 64-row tile, B multicast
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_cases([(name, ARCH) for name in CASES], tmp_path_factory.mktemp("cutlass_grouped_compile"))


_report = tu_output


@pytest.mark.parametrize("name", CASES)
def test_kernel_tu_compiles_without_spills(compiled, name):
    output, _ = _report(compiled, name, kernel=True)
    spills = [int(s) for s in re.findall(r"(\d+) bytes spill stores", output)]
    assert spills and not any(spills), f"ptxas reports spills: {spills}"
    functions = re.findall(r"Compiling entry function '(\w+)' for '(\w+)'", output)
    assert functions and all(target == ARCH for _, target in functions)
    pattern = re.compile(kernel_template(lookup(name).config.TEMPLATE).kernel_filter)
    assert all(pattern.search(fn) for fn, _ in functions), "kernel_filter must match every kernel of the TU"
    # two kernels: the grouped GEMM and the one that builds its per-group arrays from the offsets
    names = [fn for fn, _ in functions]
    assert any("gc_grouped_arguments_kernel" in fn for fn in names) and any("device_kernel" in fn for fn in names)


@pytest.mark.parametrize("name", CASES)
def test_kernel_tu_is_the_pointer_array_kernel_it_names(compiled, name):
    """The mangled GEMM kernel spells the pointer-array schedule and the group problem shape: the template
    instantiated CUTLASS's grouped kernel, not the dense one."""
    output, _ = _report(compiled, name, kernel=True)
    gemm = next(fn for fn, _ in re.findall(r"Compiling entry function '(\w+)' for '(\w+)'", output) if "device_kernel" in fn)
    config = lookup(name).config
    schedule = tags.SM90_GROUPED_SCHEDULES[config.schedule].kernel.split("::")[-1]
    assert schedule in gemm and "GroupProblemShape" in gemm
    assert "Sm90PtrArrayTmaWarpSpecialized" in gemm  # the pointer-array TMA epilogue
    # the mainloop, with the stage count config/sm90_grouped.py computes (the builder's arithmetic, carve-out included)
    stages = f"ILi{config.resolved_stages()}E"
    if config.TEMPLATE == "sm90_grouped_fp8":  # the blockwise mainloop (FP8BlockScaledAccum is an alias of FP8Blockwise)
        assert f"MainloopSm90ArrayTmaGmmaWarpSpecializedBlockwise{stages}" in gemm and "E4M3E4M3" in gemm
    else:
        assert f"MainloopSm90ArrayTmaGmmaWarpSpecialized{stages}" in gemm and "Blockwise" not in gemm


@pytest.mark.parametrize("name", CASES)
def test_kernel_tu_keeps_its_wgmma_pipeline(compiled, name):
    """No "Potential Performance Loss" from ptxas (C7510: a call between wgmma instructions serializes them)."""
    output, _ = _report(compiled, name, kernel=True)
    assert "Potential Performance Loss" not in output, output[-3000:]
    assert not any(k["perf_warnings"] for k in parse_ptxas(output))


@pytest.mark.parametrize("name", CASES)
def test_entry_tu_compiles_in_seconds(compiled, name):
    output, seconds = _report(compiled, name, kernel=False)
    assert "Compiling entry function" not in output  # host code only: no device functions
    assert seconds < 60
