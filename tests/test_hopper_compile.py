"""Compile tests (nvcc, no GPU) of the hand-written Hopper GEMM ladder, extensions/hopper/*.cuh.

Every step (wgmma_tma, pipelined, warp_specialized, persistent, cluster, best, split_k, fp8) is instantiated the way
an instantiation TU does it -- one extern "C" entry per configuration, dispatching on the input/output
types -- for its default configuration and for variants (other tiles, BK = 128, one consumer, clusters of
4, BN = 192), compiled for sm_90a exactly as a JIT build compiles kernels
(gemmcompare.build.toolchain.compile_object), and the ptxas report is checked: no "Potential Performance
Loss" note (C7510 and kin: a serialised wgmma pipeline costs up to 5x), no spills, no stack, every kernel
attributed to its configuration's tag. The default instantiation TUs (extensions/hopper/instances/) and the
device check program (extensions/hopper/check/hopper_check.cu) must build and link too. hopper.grouped (step 9)
has a fixture of its own (its default instance TU), so `-k grouped` builds it, and a host-only check of its tile walk;
so does hopper.stream_k (step 10: `-k stream_k`), with a host-only check of its data-parallel + stream-K schedule.

All translation units are compiled once, in parallel, by a module fixture (about a minute on 2 cores).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gemmcompare import paths
from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas, summarize_for
from gemmcompare.implementations.hopper import HopperConfig

pytestmark = pytest.mark.compile

ARCH = "sm_90a"
HOPPER_DIR = paths.EXTENSIONS_DIR / "hopper"

# (step, variant) -> Config<BM, BN, BK, STAGES, CONSUMERS, CLUSTER_M, GROUP[, SPLITS]>
VARIANTS: dict[tuple[str, str], tuple[int, ...]] = {
    ("wgmma_tma", "default"): (128, 128, 64, 1, 1, 1, 8),
    ("pipelined", "default"): (128, 128, 64, 3, 1, 1, 8),
    ("pipelined", "bk128_s3"): (128, 128, 128, 3, 1, 1, 8),
    ("warp_specialized", "default"): (128, 256, 64, 4, 2, 1, 8),
    ("warp_specialized", "one_consumer"): (128, 128, 64, 4, 1, 1, 8),
    ("persistent", "default"): (128, 256, 64, 4, 2, 1, 8),
    ("cluster", "default"): (128, 256, 64, 4, 2, 2, 8),
    ("cluster", "cluster4"): (128, 256, 64, 4, 2, 4, 16),
    ("best", "default"): (128, 256, 64, 4, 2, 2, 8),
    ("best", "256x128_c1"): (256, 128, 64, 4, 2, 1, 8),
    ("best", "128x192"): (128, 192, 64, 4, 2, 2, 8),
    # split_k: the eighth parameter is SPLITS (0: chosen per problem)
    ("split_k", "default"): (64, 128, 64, 6, 1, 1, 8, 0),
    ("split_k", "128x256_c2_k4"): (128, 256, 64, 4, 2, 1, 8, 4),
    ("split_k", "64x64"): (64, 64, 64, 6, 1, 1, 8, 0),  # in the tuning grid: twice the tiles of 64x128 at small N
    # fp8: e4m3/e5m2 in (the same two input types' count), BK = 128 (one line of FP8)
    ("fp8", "default"): (128, 128, 128, 6, 2, 1, 8),
    ("fp8", "128x192"): (128, 192, 128, 4, 2, 1, 8),
    ("fp8", "overlap"): (128, 128, 128, 6, 2, 1, 8),  # run<..., true>: two partial sets taking turns
    # run<..., false, false>: fast accumulation (no promotion), one register set: the 128x256 tile fits
    ("fp8", "fast_128x256"): (128, 256, 128, 4, 2, 1, 8),
}
DEFAULTS = {step: cfg for (step, variant), cfg in VARIANTS.items() if variant == "default"}
STEPS = list(DEFAULTS)
OUT_TYPES = 3  # f32, f16, bf16 C for each input type
IN_TYPES = 2  # f16, bf16


def cfg_bn(step: str, variant: str) -> int:
    return VARIANTS[(step, variant)][1]


def tag(step: str, variant: str) -> str:
    return f"gc_hopper_test_{step}_{variant}_tag"


def render(step: str, variant: str, cfg: tuple[int, ...]) -> str:
    """The instantiation TU the Python family is expected to render (see extensions/hopper/README.md)."""
    args = ", ".join(map(str, cfg))
    t = tag(step, variant)
    overlap = ", true" if variant == "overlap" else ", false, false" if variant.startswith("fast") else ""
    return (
        f'#include "hopper/{step}.cuh"\n'
        f"\n"
        f"struct {t};\n"
        f"using {t}_config = gc::hopper::Config<{args}>;\n"
        f"\n"
        f'extern "C" int gc_hopper_test_{step}_{variant}(const gc_gemm_args* args, char* err, size_t err_len) {{\n'
        f"  return gc::hopper::{step}::run<{t}_config, {t}{overlap}>(args, err, err_len);\n"
        f"}}\n"
    )


@dataclass
class Compiled:
    returncode: int
    log: str
    kernels: list

    def spills(self):
        return [(k["demangled"][:140], k["spill_stores"], k["spill_loads"]) for k in self.kernels
                if k["spill_stores"] or k["spill_loads"]]



@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("hopper")


# The steps off the ladder's line that have a fixture of their own (their default instance TU only): tests of
# them ask for these fixtures, which read the one shared build below.
OFF_LINE = {"grouped_compiled": "grouped", "grouped_fp8_compiled": "grouped_fp8", "stream_k_compiled": "stream_k"}


def _wanted(session) -> set[str]:
    """What the selected tests of this file need built: "ladder" (every VARIANT and the line's instance TUs) and/or
    the off-line steps' instance TUs, so that `-k grouped` builds one TU and a whole run builds all in one pool."""
    wanted = set()
    for item in session.items:
        if item.module.__name__ != __name__:
            continue
        off = [step for fixture, step in OFF_LINE.items() if fixture in item.fixturenames]
        wanted |= set(off) or ({"ladder"} if "compiled" in item.fixturenames else set())
    return wanted


@pytest.fixture(scope="module")
def compiled(request, build_dir, nvcc):
    """(step, variant) -> Compiled, plus ("instance", step) for the committed default TUs: every TU the selected
    tests need, compiled in one parallel pool (a TU compiled alone leaves a core idle)."""
    wanted, jobs = _wanted(request.session), []
    if "ladder" in wanted:
        for (step, variant), cfg in VARIANTS.items():
            src = build_dir / f"hopper_test_{step}_{variant}.cu"
            src.write_text(render(step, variant, cfg))
            jobs.append(((step, variant), src))
        for step in STEPS:
            jobs.append((("instance", step), HOPPER_DIR / "instances" / f"hopper_{step}.cu"))
    for step in sorted(wanted & set(OFF_LINE.values())):
        jobs.append((("instance", step), HOPPER_DIR / "instances" / f"hopper_{step}.cu"))
    if "grouped_fp8" in wanted:  # the overlapped promotion and the 256-column tile, as the Python family renders them
        for variant, cfg in (("overlap", GROUPED_FP8_OVERLAP), ("128x256", GROUPED_FP8_WIDE)):
            src = build_dir / f"{cfg.ident}.cu"
            src.write_text(cfg.render())
            jobs.append((("grouped_fp8", variant), src))
    return _build_all(build_dir, jobs)


def _build_all(build_dir, jobs) -> dict:
    """Compile (key, source) jobs in parallel, each as a JIT build compiles kernels: key -> Compiled."""
    def build(job):
        key, src = job
        out = build_dir / (src.name + ".o")
        res = toolchain.compile_object(Path(src), ARCH, out, include_dirs=(str(paths.EXTENSIONS_DIR),))
        log = res.stdout + res.stderr
        return key, Compiled(res.returncode, log, parse_ptxas(log))

    workers = max(1, os.cpu_count() or 1)
    with cf.ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(build, jobs))


@pytest.mark.parametrize("step, variant", list(VARIANTS))
def test_hopper_step_compiles_clean(compiled, step, variant):
    c = compiled[(step, variant)]
    assert c.returncode == 0, f"{step}/{variant} failed to compile for {ARCH}:\n{c.log[-6000:]}"
    assert "Potential Performance Loss" not in c.log, (
        f"{step}/{variant}: ptxas serialised the wgmma pipeline:\n"
        + "\n".join(sorted({ln for ln in c.log.splitlines() if "Performance Loss" in ln})))
    assert c.kernels, f"{step}/{variant}: no ptxas report"
    for k in c.kernels:
        assert not k["perf_warnings"], f"{k['demangled'][:160]}: {k['perf_warnings']}"
    assert not c.spills(), f"{step}/{variant} spills: {c.spills()}"
    # Every kernel of the TU (the GEMM kernels and the K == 0 kernels) carries the configuration's tag.
    mine = summarize_for(c.kernels, re.escape(tag(step, variant)))
    assert mine and len(mine["kernels"]) == len(c.kernels), [k["demangled"] for k in c.kernels]
    assert mine["stack_bytes"] == 0 and mine["registers"] <= 255
    # One GEMM kernel per (input, output) type -- two for best (TMA-store and direct epilogues), split_k
    # (partials and direct) and fp8 where it takes block scales (their own loop: BN <= 128, promoting) -- one
    # K == 0 kernel per output type, and split_k's reduction per output type.
    helpers = ("scale_c_kernel", "reduce_kernel")
    gemm = [k for k in c.kernels if not any(h in k["demangled"] for h in helpers)]
    blockable = step == "fp8" and not variant.startswith("fast") and cfg_bn(step, variant) <= 128
    # fp8: its TMA-store and direct epilogues too, as best's
    per_types = (2 if step in ("best", "split_k") or blockable else 1) * (2 if step == "fp8" else 1)
    assert len(gemm) == IN_TYPES * OUT_TYPES * per_types, [k["demangled"] for k in gemm]
    assert len(c.kernels) - len(gemm) == OUT_TYPES * (2 if step == "split_k" else 1)


def test_fp8_fast_accumulation_is_the_unpromoted_kernel_at_the_launch_bound(compiled):
    """accumulation: fast (run<Cfg, Tag, false, false>) instantiates fp8::kernel with PROMOTE = false and no
    block-scale kernel, and its one register set fits 128x256 with two consumers at the 168-register cap,
    unspilled (the promoting kernel cannot build that tile: acc and part would need 256 sums per thread)."""
    c = compiled[("fp8", "fast_128x256")]
    gemm = [k for k in c.kernels if "scale_c_kernel" not in k["demangled"]]
    assert gemm and all(re.search(r", false, false, false, (true|false), gc_hopper_test_fp8_fast", k["demangled"])
                        for k in gemm), [k["demangled"][:200] for k in gemm]  # OVERLAP, BLOCK, PROMOTE, TMA_STORE
    assert all(k["registers"] == 168 for k in gemm), [(k["registers"], k["demangled"][:100]) for k in gemm]


@pytest.mark.parametrize("step", [s for s in STEPS if DEFAULTS[s][4] == 2])
def test_two_consumer_steps_get_the_launch_bound_registers(compiled, step):
    """setmaxnreg takes effect only under a register cap at entry: the 384-thread kernels must be compiled
    at 65536 / 384 = 168 registers (producer 40 + 2 consumers x 232 = 64512 fit in the register file)."""
    c = compiled[(step, "default")]
    for k in c.kernels:
        if "scale_c_kernel" not in k["demangled"]:
            if "reduce_kernel" not in k["demangled"]:
                assert k["registers"] == 168, (k["demangled"][:120], k["registers"])
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


@pytest.mark.parametrize("step", STEPS)
def test_default_instance_tu_compiles_clean(compiled, step):
    c = compiled[("instance", step)]
    assert c.returncode == 0, c.log[-6000:]
    assert "Potential Performance Loss" not in c.log
    assert not c.spills()
    assert summarize_for(c.kernels, rf"gc_hopper_{step}_tag")["kernels"]


def test_device_check_program_builds_and_links(compiled, build_dir, nvcc):
    """extensions/hopper/check/hopper_check.cu against the default instance objects (built above): what
    run_check.sh builds on the device. Linked, not run (no GPU here)."""
    assert all(compiled[("instance", s)].returncode == 0 for s in STEPS)
    src = HOPPER_DIR / "check" / "hopper_check.cu"
    obj = build_dir / "hopper_check.o"
    res = toolchain.compile_object(src, ARCH, obj, include_dirs=(str(paths.EXTENSIONS_DIR),))
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    objs = [str(build_dir / f"hopper_{s}.cu.o") for s in STEPS]
    exe = build_dir / "hopper_check"
    link = subprocess.run([str(nvcc), "-o", str(exe), str(obj), *objs, "-ldl"], capture_output=True, text=True,
                          timeout=600)
    assert link.returncode == 0, link.stdout + link.stderr
    assert exe.exists()


def test_tile_walks_cover_every_tile_once(tmp_path, nvcc):
    """extensions/hopper/check/raster_check.cu: the kernels' own grouped_raster, walked as each step walks
    it (one CTA per tile; persistent; persistent over cluster tiles of 1, 2, 4 CTAs), computes every tile
    of C exactly once, for many grid shapes. Host code only."""
    exe = tmp_path / "raster_check"
    cmd = [str(nvcc), "-std=c++17", "-O2", *toolchain.gencode_flags(ARCH), f"-I{paths.ABI_INCLUDE_DIR}",
           f"-I{paths.EXTENSIONS_DIR}", str(HOPPER_DIR / "check" / "raster_check.cu"), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]


def test_generated_wgmma_wrappers_are_current(tmp_path):
    """hopper_wgmma.cuh is generated by gen_wgmma.py: regenerate it elsewhere and compare."""
    out = tmp_path / "hopper_wgmma.cuh"
    subprocess.run([sys.executable, str(HOPPER_DIR / "gen_wgmma.py"), str(out)], check=True, capture_output=True,
                   timeout=60)
    assert out.read_text() == (HOPPER_DIR / "hopper_wgmma.cuh").read_text(), (
        "hopper_wgmma.cuh differs from what gen_wgmma.py writes: rerun python3 extensions/hopper/gen_wgmma.py")


# -- hopper.grouped (step 9): grouped problems in one persistent launch -----------------------------------------

# variant -> Config; "default" is the committed instance TU (extensions/hopper/instances/hopper_grouped.cu). The
# one-consumer 64-row variant (MoE decode's groups of a few rows: (64, 256, 64, 4, 1, 1, 8)) compiled clean at
# 154 registers when the step was written; it is not repeated here, as each sm_90a TU costs CI about a minute.
GROUPED_VARIANTS = {"default": (128, 256, 64, 4, 2, 1, 8)}  # the committed instance TU's configuration


def grouped_tag(variant: str) -> str:
    return "gc_hopper_grouped_tag" if variant == "default" else tag("grouped", variant)


@pytest.fixture(scope="module")
def grouped_compiled(compiled):
    return {"default": compiled[("instance", "grouped")]}


def _clean_instance(c, name: str, tag_pattern: str) -> list:
    """An off-line step's instance TU compiled clean for sm_90a: no ptxas performance note or warning, no spills,
    every kernel carrying the step's tag and no stack; returns its GEMM kernels (not the K == 0 ones)."""
    assert c.returncode == 0, f"{name} failed to compile for {ARCH}:\n{c.log[-6000:]}"
    assert "Potential Performance Loss" not in c.log, "\n".join(
        sorted({ln for ln in c.log.splitlines() if "Performance Loss" in ln}))
    assert c.kernels and not any(k["perf_warnings"] for k in c.kernels)
    assert not c.spills(), f"{name} spills: {c.spills()}"
    mine = summarize_for(c.kernels, tag_pattern)
    assert mine and len(mine["kernels"]) == len(c.kernels), [k["demangled"] for k in c.kernels]
    assert mine["stack_bytes"] == 0
    return [k for k in c.kernels if "scale_c_kernel" not in k["demangled"]]


@pytest.mark.parametrize("variant", list(GROUPED_VARIANTS))
def test_hopper_grouped_compiles_clean(grouped_compiled, variant):
    c = grouped_compiled[variant]
    gemm = _clean_instance(c, f"grouped/{variant}", re.escape(grouped_tag(variant)))
    # two GEMM kernels per (input, output) type (TMA-store and direct epilogues, as best), one K == 0 kernel per output
    assert len(gemm) == IN_TYPES * OUT_TYPES * 2 and len(c.kernels) - len(gemm) == OUT_TYPES
    consumers = GROUPED_VARIANTS[variant][4]
    for k in gemm:  # two consumers: the 384-thread launch cap that setmaxnreg 40/232 needs
        cap_ok = k["registers"] == 168 if consumers == 2 else k["registers"] <= 255
        assert cap_ok, (k["demangled"][:120], k["registers"])
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


# hopper.grouped_fp8 (step 11): the FP8 block-scaled grouped step, its committed default TU (128x128x128, 6 stages,
# two consumers: the sums and the promotion registers of 64 rows x 128 columns per consumer thread)
@pytest.fixture(scope="module")
def grouped_fp8_compiled(compiled):
    return compiled[("instance", "grouped_fp8")]


def test_hopper_grouped_fp8_compiles_clean(grouped_fp8_compiled):
    c = grouped_fp8_compiled
    gemm = _clean_instance(c, "grouped_fp8", re.escape("gc_hopper_grouped_fp8_tag"))
    # two GEMM kernels per (FP8 input, output) type (TMA-store and direct epilogues): e4m3 and e5m2 in, f32/f16/bf16
    # out; one K == 0 kernel per output
    assert len(gemm) == 2 * OUT_TYPES * 2 and len(c.kernels) - len(gemm) == OUT_TYPES, \
        [k["demangled"] for k in c.kernels]
    for k in gemm:  # two consumers: the 384-thread launch cap that setmaxnreg 40/232 needs
        assert k["registers"] == 168, (k["demangled"][:120], k["registers"])
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


GROUPED_FP8_OVERLAP = HopperConfig("grouped_fp8", (128, 128, 128), 6, 2, 1, 8, overlap=1)
GROUPED_FP8_WIDE = HopperConfig("grouped_fp8", (128, 256, 128), 4, 2, 1, 8)


def test_hopper_grouped_fp8_overlap_keeps_three_register_sets_unspilled(compiled, grouped_fp8_compiled):
    """overlap: 1 keeps the sums and two partial sets (3 x 64 f32 a consumer thread) beside the block scales
    loaded a stage ahead: OVERLAP = true in every GEMM kernel, at the 168-register launch cap (setmaxnreg 232 for
    the consumers), with no spill, no stack and no serialised wgmma pipeline."""
    c = compiled[("grouped_fp8", "overlap")]
    gemm = _clean_instance(c, "grouped_fp8/overlap", re.escape(f"{GROUPED_FP8_OVERLAP.symbol()}_tag"))
    assert len(gemm) == 2 * OUT_TYPES * 2 and len(c.kernels) - len(gemm) == OUT_TYPES, \
        [k["demangled"] for k in c.kernels]
    for k in gemm:  # <..., OVERLAP, TMA_STORE, Tag>
        assert k["registers"] == 168 and re.search(r", true, (true|false), gc_hopper", k["demangled"]), \
            (k["demangled"][:160], k["registers"])
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


def test_hopper_grouped_fp8_promotes_a_256_column_tile_per_half_unspilled(compiled, grouped_fp8_compiled):
    """BN = 256 under block scales: each 128-column half's wgmmas (m64n128k32, never m64n256) go into one partial set
    beside the 64 x 256 sums (192 registers of f32), at the 168-register launch cap with no spill or stack."""
    c = compiled[("grouped_fp8", "128x256")]
    gemm = _clean_instance(c, "grouped_fp8/128x256", re.escape(f"{GROUPED_FP8_WIDE.symbol()}_tag"))
    assert len(gemm) == 2 * OUT_TYPES * 2 and len(c.kernels) - len(gemm) == OUT_TYPES, \
        [k["demangled"] for k in c.kernels]
    assert all(k["registers"] == 168 for k in gemm), [(k["registers"], k["demangled"][:100]) for k in gemm]
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


def test_grouped_walk_visits_every_group_tile_once(tmp_path, nvcc):
    """extensions/hopper/check/grouped_walk_check.cu: hopper.grouped's own TileWalk, walked by every CTA of many
    grids over group-M lists with empty groups (first, between, last), one group, 256 skewed groups, 1024 tiny ones
    and Ms that are not multiples of BM, visits every (group, tile) exactly once and no tile outside its group; five
    planted wrong walks are each caught (so the check can fail). Host code only."""
    exe = tmp_path / "grouped_walk_check"
    cmd = [str(nvcc), "-std=c++17", "-O2", *toolchain.gencode_flags(ARCH), f"-I{paths.ABI_INCLUDE_DIR}",
           f"-I{paths.EXTENSIONS_DIR}", str(HOPPER_DIR / "check" / "grouped_walk_check.cu"), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]
    assert run.stdout.count("caught (") == 5, run.stdout


# -- hopper.stream_k (step 10): data-parallel + stream-K schedule --------------------------------------------------

# One sm_90a TU only (CI time): the committed default instance, AUTO schedule (its kernel is the same for every
# schedule: the mode only changes the host's plan).
@pytest.fixture(scope="module")
def stream_k_compiled(compiled):
    return compiled[("instance", "stream_k")]


def test_hopper_stream_k_compiles_clean(stream_k_compiled):
    c = stream_k_compiled
    gemm = _clean_instance(c, "stream_k", "gc_hopper_stream_k_tag")
    # two GEMM kernels per (input, output) type (TMA-store and direct epilogues, as best), one K == 0 kernel per output
    assert len(gemm) == IN_TYPES * OUT_TYPES * 2 and len(c.kernels) - len(gemm) == OUT_TYPES
    assert all(k["registers"] == 168 for k in gemm), [(k["registers"], k["demangled"][:100]) for k in gemm]
    assert "C7508" not in c.log, "ptxas ignored setmaxnreg"


def test_stream_k_schedule_covers_every_tile_k_iteration_once(tmp_path, nvcc):
    """extensions/hopper/check/stream_k_check.cu: the kernel's own schedule (stream_k_walk.cuh), walked by every CTA
    for ragged M/N/K, one tile, fewer tiles than SMs, exactly full waves and prefill shapes, on 132, 114 and 78 SMs
    and every mode: each (tile, k iteration) exactly once, one finisher per split tile adding the others in k order,
    one slot per CTA, waits only at the end of a range, grid <= SMs; five planted wrong schedules are each caught.
    Host code only."""
    exe = tmp_path / "stream_k_check"
    cmd = [str(nvcc), "-std=c++17", "-O2", *toolchain.gencode_flags(ARCH), f"-I{paths.ABI_INCLUDE_DIR}",
           f"-I{paths.EXTENSIONS_DIR}", str(HOPPER_DIR / "check" / "stream_k_check.cu"), "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "PASSED" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]
    assert run.stdout.count("': caught (") == 5, run.stdout
    assert "8192x5120x4096 on 132 SMs: 1280 tiles, 224 stream-K" in run.stdout  # the hybrid at the shape
