"""Compile tests (nvcc, no GPU) of the `decode` and `gemv` families: their default configurations' translation
units (one per pair of element types, and the entry), compiled once, in parallel, exactly as a run on an H200
compiles them (the arch `target_arch` picks for compute capability 9.0, the build request's flags and include
folders), then read: the ptxas report, the PTX, the objects' symbols and the headers the preprocessor opened.
One more TU holds the Python side's numbers as static_asserts against the headers' constants. About 30 s on a
2-core machine."""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas, summarize_for
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations import PARAMETRIZED, decode, gemv, instantiate
from gemmcompare.implementations.decode import TYPE_PAIRS
from gemmcompare.paths import ABI_HEADER, EXTENSIONS_DIR
from gemmcompare.tuning.tuned import FAMILY_GRIDS

pytestmark = pytest.mark.compile

H200_CC = 90
LOAD_WIDTHS = 4  # each decode instance TU holds one kernel per load width: 16, 8, 4 and 2 bytes
GEMV_KERNELS = 3 * LOAD_WIDTHS  # gemv: ROWS 1, 2, 4, each at every load width


@dataclass
class Unit:
    """One translation unit, compiled."""

    returncode: int
    log: str
    obj: Path
    deps: list[Path]  # every file the preprocessor opened

    @property
    def kernels(self) -> list[dict]:
        return parse_ptxas(self.log)


@dataclass
class Build:
    impl: object
    arch: str
    units: dict[str, Unit]  # by filename
    ptx: dict[str, str]  # kept PTX, by file name

    def instances(self) -> dict[str, Unit]:
        return {name: u for name, u in self.units.items() if not name.endswith("_entry.cu")}


def _deps(path: Path) -> list[Path]:
    """The files of a make rule `obj : src dep dep \\ ...` (nvcc -MD)."""
    text = path.read_text().replace("\\\n", " ")
    return [Path(p) for p in text.split(":", 1)[1].split()]


@pytest.fixture(scope="module")
def built(tmp_path_factory, nvcc) -> dict[str, Build]:
    out = tmp_path_factory.mktemp("decode")
    jobs = []
    for family in ("decode", "gemv"):
        impl = instantiate(PARAMETRIZED[family], {})
        req = impl.build_request(impl.target_arch(H200_CC))
        keep = out / family
        keep.mkdir()
        jobs += [(family, req, keep, src) for src in req.sources]

    def build(job):
        family, req, keep, src = job
        path = keep / src.filename
        path.write_text(src.text)
        obj, dep = keep / (src.filename + ".o"), keep / (src.filename + ".d")
        res = toolchain.compile_object(path, req.arch, obj, include_dirs=req.include_dirs,
                                       extra_flags=(*req.cuda_flags, "-keep", f"-keep-dir={keep}",
                                                    "-MD", "-MF", str(dep)))
        deps = _deps(dep) if res.returncode == 0 else []
        return family, src.filename, Unit(res.returncode, res.stdout + res.stderr, obj, deps)

    with cf.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        done = list(pool.map(build, jobs))
    builds = {}
    for family in ("decode", "gemv"):
        impl = instantiate(PARAMETRIZED[family], {})
        units = {name: unit for fam, name, unit in done if fam == family}
        for name, unit in units.items():
            assert unit.returncode == 0, f"{name} failed to compile:\n{unit.log[-4000:]}"
        ptx = {p.name: p.read_text() for p in (out / family).glob("*.ptx")}
        builds[family] = Build(impl, impl.target_arch(H200_CC), units, ptx)
    return builds


def test_a_run_on_an_h200_compiles_them_for_sm90():
    for family in ("decode", "gemv"):
        assert instantiate(PARAMETRIZED[family], {}).target_arch(H200_CC) == "sm_90"


def test_default_decode_compiles_for_sm90_without_spills_and_streams_b(built):
    b = built["decode"]
    impl = b.impl
    assert len(b.units) == len(TYPE_PAIRS) + 1
    assert not b.units[impl.config.entry_filename].kernels  # the dispatcher holds no kernel
    for filename, unit in b.instances().items():
        kernels = unit.kernels
        assert len(kernels) == LOAD_WIDTHS, [k["demangled"] for k in kernels]
        # The 16-byte kernel (every problem whose A and B rows are 16-byte aligned) must not spill, and must fit
        # two 256-thread CTAs per SM (<= 128 registers: the default's bytes in flight assume them). The narrower
        # kernels serve unaligned leading dimensions only; ptxas may trade a few bytes of spill for registers there.
        for k in kernels:
            spilled = k["spill_stores"] + k["spill_loads"]
            if ", 16, gc_decode_" in k["demangled"]:
                assert spilled == 0 and k["registers"] <= 128, (filename, k["registers"], spilled)
            else:
                assert spilled <= 16, (filename, k["demangled"][:100], spilled)
        assert sum(", 16, gc_decode_" in k["demangled"] for k in kernels) == 1
        mine = summarize_for(kernels, impl.kernel_filter)
        assert mine and len(mine["kernels"]) == LOAD_WIDTHS and mine["registers"] <= 128
        # a row's registers are its own types' kernels: this TU's under its pair only
        for pair in TYPE_PAIRS:
            contract = next(c for c in BUILTIN_CONTRACTS.values() if (c.a, c.c) == pair and c.layout == "tn")
            got = summarize_for(kernels, impl.kernel_filter_for(contract))
            own = filename.endswith(f"_{pair[0].value}_{pair[1].value}.cu")
            assert len(got.get("kernels", ())) == (LOAD_WIDTHS if own else 0), (filename, pair)

    bf16 = next(text for name, text in b.ptx.items() if "_bf16_bf16" in name)
    f16 = next(text for name, text in b.ptx.items() if "_f16_f32" in name)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in bf16 and ".f16.f16" not in bf16
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in f16
    for text in (bf16, f16):
        # B streams: 16-byte loads that skip L1 with an L2 evict-first policy; the split-K reduction goes through
        # distributed shared memory between the CTAs of a cluster
        assert "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32" in text
        assert "createpolicy.fractional.L2::evict_first" in text
        assert "mapa.shared::cluster" in text and "barrier.cluster.wait.acquire" in text
        # deterministic: no atomic or reduction instruction anywhere
        assert not re.search(r"^\s*(@!?%p\d+\s+)?(atom|red)\.", text, re.M)


def test_default_gemv_compiles_for_sm90_without_spills_and_streams_b(built):
    b = built["gemv"]
    assert len(b.units) == len(TYPE_PAIRS) + 1
    assert not b.units[b.impl.config.entry_filename].kernels
    for filename, unit in b.instances().items():
        kernels = unit.kernels
        assert len(kernels) == GEMV_KERNELS, [k["demangled"] for k in kernels]
        # none spills: the default keeps 8 loads of B (32 registers) in flight per lane, with room to spare
        for k in kernels:
            assert k["spill_stores"] + k["spill_loads"] == 0, (filename, k["demangled"][:120], k["registers"])
        mine = summarize_for(kernels, b.impl.kernel_filter)
        assert mine and len(mine["kernels"]) == GEMV_KERNELS

    bf16 = next(text for name, text in b.ptx.items() if "_bf16_bf16" in name)
    # B streams in 16-byte loads that skip L1 with an L2 evict-first policy; the sum is a shuffle butterfly, no
    # shared memory and no atomics (deterministic)
    assert "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32" in bf16
    assert "shfl.sync.bfly.b32" in bf16
    assert not re.search(r"^\s*(@!?%p\d+\s+)?(atom|red)\.", bf16, re.M)
    assert "mma.sync" not in bf16


def _symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined, undefined) global gc_* symbols of an object file."""
    out = subprocess.run(["nm", "-g", str(obj)], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[-1].startswith("gc_"):
            (undefined if parts[-2] == "U" else defined).add(parts[-1])
    return defined, undefined


@pytest.mark.parametrize("family", ["decode", "gemv"])
def test_the_header_defines_what_the_rendered_units_call(built, family):
    """Each instance TU's call into the header (namespace::launch<Config, tag, types>) defines its launcher and the
    launcher's occupancy query; the entry calls exactly those, so the extension links."""
    b = built[family]
    cfg = b.impl.config
    launchers = {cfg.symbol(t) for t in TYPE_PAIRS}
    for pair in TYPE_PAIRS:
        defined, _ = _symbols(b.units[cfg.instance_filename(pair)].obj)
        assert defined == {cfg.symbol(pair), f"{cfg.symbol(pair)}_occupancy"}, (pair, defined)
    defined, undefined = _symbols(b.units[cfg.entry_filename].obj)
    assert defined == {b.impl.entry_symbol, f"{b.impl.entry_symbol}_occupancy"}
    assert undefined == launchers | {f"{s}_occupancy" for s in launchers}


@pytest.mark.parametrize("family", ["decode", "gemv"])
def test_the_kernels_include_cuda_and_the_abi_header_only(built, family):
    """What a run compiles next to torch's headers opens none of them: the family's own headers, the ABI header
    and the CUDA toolkit's (and the C++ library's)."""
    import torch

    torch_dir = Path(torch.__file__).resolve().parent
    b = built[family]
    own = {"decode": {"decode/decode_gemm.cuh"}, "gemv": {"decode/gemv.cuh", "decode/decode_gemm.cuh"}}[family]
    for filename, unit in b.units.items():
        files = [p.resolve() for p in unit.deps]
        assert files, filename
        local = {p.relative_to(EXTENSIONS_DIR.resolve()).as_posix() for p in files
                 if p.is_relative_to(EXTENSIONS_DIR.resolve()) and p.suffix != ".cu"}
        want = {ABI_HEADER.resolve().relative_to(EXTENSIONS_DIR.resolve()).as_posix()}
        assert local == want | (set() if filename.endswith("_entry.cu") else own), (filename, local)
        assert not [p for p in files if p.is_relative_to(torch_dir) or {"ATen", "c10", "torch"} & set(p.parts)]


def test_the_python_side_computes_what_the_headers_define(tmp_path, nvcc):
    """The numbers the Python side plans with (the M limits behind the SKIPs, dynamic shared memory, threads,
    split choices) are the headers' own, for every configuration the tune grids and the defaults name."""
    decode_configs = {decode.DecodeConfig()} | {
        decode.DecodeConfig(cols=c, unroll=u, splits=s) for c in FAMILY_GRIDS["decode"]["cols"]
        for u in FAMILY_GRIDS["decode"]["unroll"] for s in FAMILY_GRIDS["decode"]["splits"]}
    gemv_configs = {gemv.GemvConfig()} | {
        gemv.GemvConfig(warps=w, unroll=u)
        for w in FAMILY_GRIDS["gemv"]["warps"] for u in FAMILY_GRIDS["gemv"]["unroll"]}
    lines = ['#include "decode/gemv.cuh"',
             f"static_assert(gc::decode::MAX_M == {decode.MAX_M}, \"decode MAX_M\");",
             f"static_assert(gc::decode::RED_PAD == {decode.RED_PAD}, \"decode RED_PAD\");",
             f"static_assert(gc::decode::MAX_SPLITS == {max(s for s in decode.SPLIT_CHOICES if s != 'auto')}, "
             f"\"decode splits\");",
             f"static_assert(gc::gemv::MAX_M == {gemv.MAX_M}, \"gemv MAX_M\");"]
    for cfg in sorted(decode_configs, key=lambda c: c.ident):
        t = cfg.config_template("")
        lines += [f"static_assert({t}::SMEM_BYTES == {cfg.smem_bytes}, \"{cfg.ident} smem\");",
                  f"static_assert({t}::THREADS == {cfg.threads}, \"{cfg.ident} threads\");",
                  f"static_assert({t}::TILES == {cfg.tiles}, \"{cfg.ident} tiles\");"]
    for cfg in sorted(gemv_configs, key=lambda c: c.ident):
        lines.append(f"static_assert({cfg.config_template('')}::THREADS == {cfg.threads}, \"{cfg.ident} threads\");")
    src = tmp_path / "twins.cu"
    src.write_text("\n".join(lines) + "\n")
    req = instantiate(PARAMETRIZED["decode"], {}).build_request("sm_90")
    res = toolchain.compile_object(src, "sm_90", tmp_path / "twins.o", include_dirs=req.include_dirs)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
