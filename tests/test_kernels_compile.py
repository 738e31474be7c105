"""Compile tests (nvcc, no GPU): every lab kernel translation unit and a representative set of mma_sync
instantiations, for sm_80 and sm_90a, compiled exactly as a JIT build compiles them (same flags, same
include folders, from each implementation's own build request), then the ptxas report is checked:
no spills on the main variants, every kernel attributed by the implementation's kernel_filter.

The BF16 translation units (bf16 -> f32 and bf16 -> bf16) are compiled for a subset of the mma_sync set
that covers both mma shapes, every shared-memory layout, both B layouts and both epilogues; one test reads
the PTX of a BF16 build and finds the .bf16 mma.sync in it (and no .f16 one).

Also builds and runs extensions/mma_sync/host_check.cu: the mma_sync kernel's own index arithmetic
(shared layouts, chunk copies, ldmatrix lane addresses, accumulator coordinates, raster) on the CPU
against emulated cp.async / ldmatrix / mma.sync, over ragged shapes, bit for bit.

All translation units are compiled once, in parallel (one nvcc per core), by a module fixture; each
test then reads its result. About 3 minutes on a 2-core machine before the BF16 TUs; 7 minutes with them on a shared, busy one.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from gemmcompare import paths
from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas, summarize_for
from gemmcompare.contracts.precision import LAYOUTS, DType, PrecisionContract
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.lab import RUNGS, WARP_TILES
from gemmcompare.implementations.mma_sync import TYPE_PAIRS, type_suffix

pytestmark = pytest.mark.compile

ARCHS = ("sm_80", "sm_90a")

# The representative mma_sync set: TN and TT, swizzle / padded / row, 1 to 4 stages, BK 16 to 64,
# m16n8k8, the f16-accumulate canary, the fused bias + ReLU epilogue. Every instance TU holds both the
# aligned (cp.async) and the general (element-wise) kernel.
MMA_SET = {
    "default": {},
    "bk32_s4": {"block": (128, 256, 32), "stages": 4, "layout": "tn"},
    "padded_256x128": {"block": (256, 128, 32), "stages": 3, "smem": "padded", "group": 1, "layout": "tn"},
    "k8_s4": {"mma": "m16n8k8", "stages": 4, "layout": "tn"},
    "f16acc": {"acc": "f16"},
    "bias_relu": {"epilogue": "bias_relu"},
    "row_s2_4warps": {"block": (128, 128, 32), "warps": 4, "stages": 2, "smem": "row", "layout": "tt"},
    "s1_small": {"block": (64, 64, 32), "warps": 4, "stages": 1, "layout": "tn"},
    "bk16_tt": {"block": (128, 128, 16), "warps": 4, "stages": 3, "layout": "tt"},
}
# Whose BF16 TUs compile too: m16n8k16 and m16n8k8, swizzle / padded / row, tn and tt, plain and bias + ReLU.
# (The others compile their f16 -> f32 TUs only: the BF16 ones differ in the mma instruction and the
# epilogue's stores, which these cover, and every TU costs nvcc time.)
BF16_KEYS = ("default", "padded_256x128", "k8_s4", "bias_relu", "row_s2_4warps")


def _lab_impls():
    out = {r.variant: r.make() for r in RUNGS}
    for wt in WARP_TILES:
        out[f"wmma_staged_{wt[0]}x{wt[1]}"] = instantiate(PARAMETRIZED["lab.wmma_staged"], {"warp_tile": wt})
    return out


def _mma_impls():
    return {name: instantiate(PARAMETRIZED["mma_sync"], params) for name, params in MMA_SET.items()}


def _compiled_here(family: str, key: str, filename: str) -> bool:
    """Every TU, except the BF16 instances of the mma_sync configurations outside BF16_KEYS."""
    return family != "mma" or key in BF16_KEYS or "_bf16" not in filename


def _pair_of(filename: str):
    """The (inputs, output) pair an mma_sync instance TU is built for, from its name."""
    stem = filename[:-len(".cu")]
    return next(t for t in reversed(TYPE_PAIRS) if stem.endswith(type_suffix(t)))


@dataclass
class Compiled:
    key: str
    filename: str
    returncode: int
    log: str
    seconds: float
    kernels: list

    def spills(self):
        return [(k["demangled"][:120], k["spill_stores"], k["spill_loads"]) for k in self.kernels
                if k["spill_stores"] or k["spill_loads"]]



@pytest.fixture(scope="module")
def compiled(tmp_path_factory, nvcc):
    """Compile every TU of every implementation above for every arch, in parallel. Key: (impl key, arch,
    filename) -> Compiled."""
    out_dir = tmp_path_factory.mktemp("kernels")
    jobs = []
    for family, impls in (("lab", _lab_impls()), ("mma", _mma_impls())):
        for key, impl in impls.items():
            assert not hasattr(impl, "reason"), f"{key}: {getattr(impl, 'reason', '')}"
            for arch in ARCHS:
                req = impl.build_request(arch)
                for src in req.sources:
                    if _compiled_here(family, key, src.filename):
                        jobs.append((f"{family}:{key}", arch, src, req))
    # Shared TUs (the same instance in two implementations) compile once.
    unique = {}
    for fam_key, arch, src, req in jobs:
        unique.setdefault((arch, src.filename), (src, req))

    def build(item):
        (arch, filename), (src, req) = item
        folder = out_dir / arch
        folder.mkdir(exist_ok=True)
        path = Path(src.path) if src.path is not None else folder / filename
        if src.path is None:
            path.write_text(src.text)
        t0 = time.time()
        res = toolchain.compile_object(path, arch, folder / (filename + ".o"), extra_flags=req.cuda_flags,
                                       include_dirs=req.include_dirs, uses_cutlass=req.uses_cutlass)
        log = res.stdout + res.stderr
        return (arch, filename), Compiled(filename, filename, res.returncode, log, time.time() - t0, parse_ptxas(log))

    workers = max(1, os.cpu_count() or 1)
    with cf.ThreadPoolExecutor(workers) as pool:
        done = dict(pool.map(build, unique.items()))
    return {(fam_key, arch, src.filename): done[(arch, src.filename)] for fam_key, arch, src, _ in jobs}


def _results(compiled, prefix, arch):
    return {fn: c for (k, a, fn), c in compiled.items() if k == prefix and a == arch}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("key", [r.variant for r in RUNGS] + [f"wmma_staged_{w[0]}x{w[1]}" for w in WARP_TILES])
def test_lab_kernel_compiles_without_spills(compiled, key, arch):
    impl = _lab_impls()[key]
    results = _results(compiled, f"lab:{key}", arch)
    assert results, f"nothing compiled for {key}"
    for fn, c in results.items():
        assert c.returncode == 0, f"{fn} failed to compile for {arch}:\n{c.log[-4000:]}"
        assert c.kernels, f"{fn}: no ptxas report for {arch}"
        assert not c.spills(), f"{fn} spills on {arch}: {c.spills()}"
        mine = summarize_for(c.kernels, impl.kernel_filter)
        assert mine and len(mine["kernels"]) == len(c.kernels), (
            f"kernel_filter {impl.kernel_filter!r} does not attribute every kernel of {fn}: {[k['demangled'] for k in c.kernels]}")
        if getattr(impl, "layout_template", ""):  # one instantiation per storage order: a row's is its own
            for layout in ("tt", "tn", "nt", "nn"):
                contract = PrecisionContract(name=f"x_{layout}", a=DType.F16, b=DType.F16, c=DType.F32,
                                             acc=DType.F32, order_a=LAYOUTS[layout][0], order_b=LAYOUTS[layout][1])
                one = summarize_for(c.kernels, impl.kernel_filter_for(contract))
                assert one and len(one["kernels"]) == 1, (
                    f"{layout}: {impl.kernel_filter_for(contract)!r} picks {one.get('kernels')} of {fn}")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("key", list(MMA_SET))
def test_mma_sync_instance_compiles_without_spills(compiled, key, arch):
    impl = _mma_impls()[key]
    results = _results(compiled, f"mma:{key}", arch)
    pairs = impl.config.type_pairs if key in BF16_KEYS else TYPE_PAIRS[:1]
    assert len(results) == len(impl.config.layouts) * len(pairs) + 1  # one TU per layout and types + the entry
    for fn, c in results.items():
        assert c.returncode == 0, f"{fn} failed to compile for {arch}:\n{c.log[-4000:]}"
        if fn.endswith("_entry.cu"):
            assert not c.kernels  # the dispatcher holds no kernel
            continue
        # The whole-tile, the aligned (cp.async) and the general (element-wise) kernel of this instantiation.
        assert len(c.kernels) == 3, [k["demangled"] for k in c.kernels]
        assert not c.spills(), f"{fn} spills on {arch}: {c.spills()}"
        mine = summarize_for(c.kernels, impl.kernel_filter)
        assert mine and len(mine["kernels"]) == 3
        assert mine["registers"] <= 255 and mine["stack_bytes"] == 0
        # a row's resources are its own types' kernels: this TU's under its pair, none of them under another
        inputs, output = _pair_of(fn)
        for pair in impl.config.type_pairs:
            contract = PrecisionContract(name="x_tn", a=pair[0], b=pair[0], c=pair[1], acc=DType.F32,
                                         order_a=LAYOUTS["tn"][0], order_b=LAYOUTS["tn"][1])
            got = summarize_for(c.kernels, impl.kernel_filter_for(contract))
            assert len(got.get("kernels", ())) == (3 if pair == (inputs, output) else 0), (fn, pair)


def test_no_kernel_filter_claims_another_implementations_kernels(compiled):
    impls = _mma_impls()
    for key, impl in impls.items():
        for (k, arch, fn), c in compiled.items():
            if k.startswith("mma:") and k != f"mma:{key}" and c.kernels:
                if fn in {s.filename for s in impl.sources()}:
                    continue  # a TU shared by two implementations (same instantiation)
                assert not summarize_for(c.kernels, impl.kernel_filter), f"{key}'s filter matches {fn}"


@pytest.mark.parametrize("params,pair,mma", [
    ({"block": (64, 64, 32), "warps": 4, "layout": "tn"}, TYPE_PAIRS[1], "m16n8k16"),
    ({"block": (64, 64, 32), "warps": 4, "layout": "tt", "mma": "m16n8k8", "epilogue": "bias_relu", "smem": "padded"},
     TYPE_PAIRS[2], "m16n8k8"),
])
def test_bf16_instances_run_the_bf16_mma(tmp_path, nvcc, params, pair, mma):
    """A BF16 contract's kernels multiply with mma.sync .bf16 (no conversion to f16); the f16 TU of the same
    configuration keeps .f16. Read from the PTX nvcc keeps while compiling the TU as a JIT build does."""
    impl = instantiate(PARAMETRIZED["mma_sync"], params)
    layout = impl.config.layouts[0]
    ptx = {}
    for types in (pair, TYPE_PAIRS[0]):
        req = impl.build_request("sm_80")
        (src,) = [s for s in req.sources if s.filename == impl.config.instance_filename(layout, types)]
        path = tmp_path / src.filename
        path.write_text(src.text)
        keep = tmp_path / f"keep{type_suffix(types)}"
        keep.mkdir()
        res = toolchain.compile_object(path, "sm_80", tmp_path / (src.filename + ".o"), include_dirs=req.include_dirs,
                                       extra_flags=("-keep", f"-keep-dir={keep}"))
        assert res.returncode == 0, res.stdout + res.stderr
        (kept,) = keep.glob("*.ptx")
        ptx[types] = kept.read_text()
    bf16_mma = f"mma.sync.aligned.{mma}.row.col.f32.bf16.bf16.f32"
    f16_mma = f"mma.sync.aligned.{mma}.row.col.f32.f16.f16.f32"
    assert bf16_mma in ptx[pair] and f16_mma not in ptx[pair]
    assert ".f16" not in ptx[pair]  # nothing converts to or from f16
    assert f16_mma in ptx[TYPE_PAIRS[0]] and bf16_mma not in ptx[TYPE_PAIRS[0]]
    if pair[1] is DType.BF16:  # the epilogue rounds to nearest even: one bf16x2 per pair of columns
        assert "cvt.rn.bf16x2.f32" in ptx[pair] and "st.global.u32" in ptx[pair]
    else:
        assert "cvt.rn.bf16" not in ptx[pair] and "st.global.v2.f32" in ptx[pair]


def test_mma_sync_index_math_on_the_host(tmp_path, nvcc):
    """The kernel's own address code against emulated cp.async / ldmatrix / mma.sync, bit for bit."""
    src = paths.EXTENSIONS_DIR / "mma_sync" / "host_check.cu"
    exe = tmp_path / "host_check"
    flags = [f for f in toolchain.kernel_cuda_flags("sm_80") if f not in ("-O3", "-Xptxas=-v")] + ["-O2"]
    cmd = [str(nvcc), *flags, str(src), "-o", str(exe), f"-I{paths.ABI_INCLUDE_DIR}", f"-I{paths.EXTENSIONS_DIR}"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "PASSED: 0 failure(s)" in run.stdout
    assert "bf16 epilogue stores: ok" in run.stdout  # round to nearest even, NaN kept, low column in the low half
    # padded and swizzled layouts are conflict-free for ldmatrix; row-major is not (the baseline)
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("ok ")]
    assert len(lines) >= 20
    assert all("1-way" in ln for ln in lines if " Row " not in ln)
