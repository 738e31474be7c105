"""nvcc compile tests of rendered CUTLASS/CuTe configurations: no GPU needed, slow (marked `compile`).

Each case renders a catalog configuration and compiles its kernel TU and its entry TU with
toolchain.compile_object, exactly as the JIT build compiles them. The TUs of the cases the selected tests
read compile in parallel (one nvcc per core), so `-k <entry>` compiles that entry only. With the first
five cases a 2-core machine took 71-127 s for the file, depending on load; the SM90 and CuTe kernel TUs
are the slowest (35-100 s each: the two SM90 cases added for skinny and long-K problems took 100 s and
95 s side by side on a loaded 2-core machine; the two FP8 kernel TUs 46 s and 72 s, one at a time, the
blockwise FP8 one 53 s; the CuTe SM90 kernel 43-59 s alone), so the whole file now takes about 5-7 minutes there.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas
from gemmcompare.cutlass import render
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.cutlass.kernel_templates import kernel_template
from gemmcompare.paths import ABI_INCLUDE_DIR

from cutlass_compiling import compile_cases, tu_output

pytestmark = pytest.mark.compile

# (catalog entry, architecture): one of each family, plus the template paths that compile different code.
CASES = [
    ("sm80_128x256x32_3st", "sm_80"),                    # CUTLASS 2.x GemmUniversal
    ("sm80_128x128x32_4st_splitk_parallel4", "sm_80"),   # + ReduceSplitK
    ("sm90_coop_128x256x64_c1x1", "sm_90a"),             # CUTLASS 3.x CollectiveBuilder, TMA + wgmma
    # (the ping-pong schedule compiles in the FP8 fast-accumulation case below and in the grouped compile test; the
    # dense ping-pong 64-row case with A multicast was dropped for CI time; sm90_pp_128x128x64_c2x1 is a golden of
    # test_cutlass_render)
    # + the stream-K scheduler (here split-K 4) with A and B swapped (a 128x16 tile, column-major D): one case for
    # both paths (the unswapped split-K case compiled the same scheduler again; each SM90 TU is 1-2 CI minutes)
    ("sm90_coop_swapab_splitk4_128x16x128_c1x1", "sm_90a"),
    ("cute_128x256x32_w2x4_4st", "sm_80"),               # the CuTe kernel, K-major operands (ldmatrix)
    ("cute_128x128x32_w2x2_3st_nt", "sm_80"),            # the CuTe kernel, MN-major operands (ldmatrix.trans)
    ("sm90_fp8_coop_128x128x128_c1x1", "sm_90a"),        # FP8: the promoting mainloop, scales in the epilogue
    ("sm90_fp8_pp_128x128x128_c1x1_fastacc", "sm_90a"),  # FP8: an FP8FastAccum schedule (no promotion)
    ("sm90_fp8_blockwise_coop_128x128x128_c1x1", "sm_90a"),  # FP8: block scales in the mainloop (FP8BlockScaledAccum)
    # our CuTe Hopper kernel (TMA atoms, SS wgmma, PipelineTmaAsync), the study's row: warp-specialized, persistent,
    # setmaxnreg. Its pipelined schedule is the same template with one flag off (compiled by hand, docs/cutlass.md).
    ("cute_sm90_ws_128x256x64_c2_4st", "sm_90a"),
]


# The cases each unparametrized test reads.
NEEDS = {
    "test_fp8_accumulation_compiles_to_the_mainloop_it_names": ("sm90_fp8_coop_128x128x128_c1x1",
                                                                "sm90_fp8_pp_128x128x128_c1x1_fastacc"),
    "test_block_scaling_compiles_to_the_blockwise_mainloop": ("sm90_fp8_blockwise_coop_128x128x128_c1x1",),
    "test_split_k_reduction_is_instantiated_only_where_it_runs": ("sm80_128x128x32_4st_splitk_parallel4", "sm80_128x256x32_3st"),
    "test_kernel_tus_share_no_symbols_across_extensions": ("sm80_128x128x32_4st_splitk_parallel4",),
    "test_cute_sm90_entry_refuses_what_tma_cannot_read_before_launching": ("cute_sm90_ws_128x256x64_c2_4st",),
}


def _selected_cases(session) -> list[tuple[str, str]]:
    """The CASES the selected tests of this file read (all of them unless -k deselects some), so that
    `-k <entry>` compiles that entry's two TUs, not every case's."""
    names = set()
    for item in session.items:
        if item.module.__name__ != __name__:
            continue
        params = getattr(item, "callspec", None)
        names.update((params.params["name"],) if params and "name" in params.params else NEEDS.get(item.name, ()))
    return [case for case in CASES if case[0] in names]


@pytest.fixture(scope="module")
def compiled(request, tmp_path_factory):
    return compile_cases(_selected_cases(request.session), tmp_path_factory.mktemp("cutlass_compile"))


_report = tu_output


@pytest.mark.parametrize("name, arch", CASES)
def test_kernel_tu_compiles_without_spills(compiled, name, arch):
    output, _ = _report(compiled, name, kernel=True)
    spills = [int(s) for s in re.findall(r"(\d+) bytes spill stores", output)]
    assert spills and not any(spills), f"ptxas reports spills: {spills}"
    functions = re.findall(r"Compiling entry function '(\w+)' for '(\w+)'", output)
    assert functions and all(target == arch for _, target in functions)
    pattern = re.compile(kernel_template(lookup(name).config.TEMPLATE).kernel_filter)
    assert all(pattern.search(fn) for fn, _ in functions), "kernel_filter must match every kernel of the TU"


@pytest.mark.parametrize("name, arch", CASES)
def test_entry_tu_compiles_in_seconds(compiled, name, arch):
    output, seconds = _report(compiled, name, kernel=False)
    assert "Compiling entry function" not in output  # host code only: no device functions
    assert seconds < 60


def test_split_k_reduction_is_instantiated_only_where_it_runs(compiled):
    parallel, _ = _report(compiled, "sm80_128x128x32_4st_splitk_parallel4", kernel=True)
    plain, _ = _report(compiled, "sm80_128x256x32_3st", kernel=True)
    assert "ReduceSplitK" in parallel and "ReduceSplitK" not in plain


def test_kernel_tus_share_no_symbols_across_extensions(compiled):
    """Template statics (GemmUniversalBase<K>::device_ordinal_, ...) must stay inside their extension: a
    GNU-unique or default-visibility definition is shared by every extension of the process that
    instantiates the same Gemm type, and the second one then skips its own kernel's setup."""
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) not found")
    config = lookup("sm80_128x128x32_4st_splitk_parallel4").config
    result, _ = compiled[("sm80_128x128x32_4st_splitk_parallel4", render.kernel_filename(config))]
    assert result.returncode == 0
    obj = result.args[result.args.index("-o") + 1]
    table = subprocess.run(["readelf", "-W", "--syms", obj], capture_output=True, text=True, check=True).stdout
    ours = [line for line in table.splitlines() if "GemmUniversalBase" in line and " UND " not in line]
    # Hidden symbols become local when the extension is linked, so only default visibility escapes.
    shared = [line.split()[-1] for line in ours if line.split()[5] == "DEFAULT" and line.split()[4] != "LOCAL"]
    assert ours, "the TU should define GemmUniversalBase's statics"
    assert not shared, f"visible to other extensions: {shared[:3]}"


@pytest.mark.parametrize("name, arch", CASES)
def test_kernel_tu_keeps_its_wgmma_pipeline(compiled, name, arch):
    """No "Potential Performance Loss" from ptxas: in a build without NDEBUG, CUTLASS's device assert in
    the SM90 mainloop is a call between wgmma instructions and ptxas serializes the pipeline (C7510)."""
    output, _ = _report(compiled, name, kernel=True)
    assert "Potential Performance Loss" not in output, output[-3000:]
    assert not any(k["perf_warnings"] for k in parse_ptxas(output))


def test_fp8_accumulation_compiles_to_the_mainloop_it_names(compiled):
    """accumulation promote is CUTLASS's promoting FP8 mainloop (FP32 adds every 128 of K); fast the
    FP8FastAccum schedule on the plain mainloop: what decides which contracts each may run."""
    promote, _ = _report(compiled, "sm90_fp8_coop_128x128x128_c1x1", kernel=True)
    fast, _ = _report(compiled, "sm90_fp8_pp_128x128x128_c1x1_fastacc", kernel=True)
    assert "MainloopSm90TmaGmmaWarpSpecializedFP8" in promote and "FP8FastAccum" not in promote
    assert "KernelTmaWarpSpecializedPingpongFP8FastAccum" in fast and "MainloopSm90TmaGmmaWarpSpecializedFP8" not in fast
    for output in (promote, fast):
        assert "E4M3E4M3" in output and "Sm90ScalarBroadcast" in output  # FP8 wgmma; the scales' broadcast


def test_block_scaling_compiles_to_the_blockwise_mainloop(compiled):
    """scaling block is CUTLASS's blockwise FP8 mainloop (scales multiplied in at each promotion) with a plain
    alpha epilogue and the builder's own stage count (the scale layouts: tests/test_cutlass_fp8.py)."""
    output, _ = _report(compiled, "sm90_fp8_blockwise_coop_128x128x128_c1x1", kernel=True)
    assert "MainloopSm90TmaGmmaWarpSpecializedBlockwiseFP8ILi6E" in output  # 6 stages, as config/ counts them
    assert "KernelTmaWarpSpecializedCooperativeFP8Blockwise" in output and "E4M3E4M3" in output
    assert "Sm90ScalarBroadcast" not in output and "LinearCombination" in output


# A host program around the CuTe SM90 entry: each line sets fields of a valid f16 -> f32 tn call, then prints
# `rc|error`. Every case returns before any CUDA call, so it runs on a machine without a GPU.
CUTE_SM90_REFUSALS = r"""
#include <cstdio>
#include "gemmcompare/gemm_abi.h"
extern "C" int ENTRY(const gc_gemm_args*, char*, size_t);
static gc_gemm_args valid() {
  gc_gemm_args a{};
  a.m = 300; a.n = 300; a.k = 251; a.lda = 256; a.ldb = 256; a.ldc = 300;
  a.dtype_a = a.dtype_b = GC_F16; a.dtype_c = GC_F32; a.dtype_acc = GC_F32;
  a.order_a = GC_ROW; a.order_b = GC_COL; a.order_c = GC_ROW; a.alpha = 1.0;
  a.a = (const void*)4096; a.b = (const void*)8192; a.c = (void*)16384;
  return a;
}
static void run(gc_gemm_args a) {
  char err[512] = "";
  int rc = ENTRY(&a, err, sizeof err);
  printf("%d|%s\n", rc, err);
}
int main() {
  { gc_gemm_args a = valid(); a.lda = 251; run(a); }
  { gc_gemm_args a = valid(); a.ldb = 260; run(a); }
  { gc_gemm_args a = valid(); a.b = (const void*)8200; run(a); }
  { gc_gemm_args a = valid(); a.k = 0; run(a); }
  { gc_gemm_args a = valid(); a.dtype_c = GC_BF16; run(a); }
  { gc_gemm_args a = valid(); a.batch = 2; run(a); }
  { gc_gemm_args a = valid(); a.m = 0; run(a); }
  return 0;
}
"""


def test_cute_sm90_entry_refuses_what_tma_cannot_read_before_launching(compiled, tmp_path):
    """The CuTe SM90 kernel builds TMA descriptors on the host, and CuTe's builder only prints to stderr when the
    driver rejects one: the entry must refuse rows TMA cannot read (leading dimensions that are not 16 bytes,
    misaligned bases, K = 0) and other contracts with the reason, before any CUDA call. Linked from the
    compiled objects into a host program and run (no GPU needed)."""
    name = "cute_sm90_ws_128x256x64_c2_4st"
    config = lookup(name).config
    objects = []
    for filename in (render.kernel_filename(config), render.entry_filename(config)):
        result, _ = compiled[(name, filename)]
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        objects.append(result.args[result.args.index("-o") + 1])
    main = tmp_path / "refusals.cpp"
    main.write_text(CUTE_SM90_REFUSALS.replace("ENTRY", render.entry_symbol(config)))
    exe = tmp_path / "refusals"
    link = subprocess.run([str(toolchain.nvcc_path()), "-std=c++17", f"-I{ABI_INCLUDE_DIR}", str(main),
                           *objects, "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert link.returncode == 0, link.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = [line.split("|", 1) for line in run.stdout.splitlines()]
    expected = [
        "TMA needs 16-byte aligned rows: lda and ldb multiples of 8 elements (lda=251, ldb=256)",
        "TMA needs 16-byte aligned rows: lda and ldb multiples of 8 elements (lda=256, ldb=260)",
        "TMA needs A and B at 16-byte aligned addresses",
        "k = 0",
        "called with another contract",
        "called with another contract",
    ]
    assert len(lines) == len(expected) + 1, run.stdout
    for (rc, err), want in zip(lines, expected):
        assert rc != "0" and want in err and err.startswith(config.kernel_name), (rc, err, want)
    assert lines[-1] == ["0", ""]  # m = 0: nothing to compute, nothing launched
