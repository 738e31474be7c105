"""Compile test (nvcc, no GPU) of the `decode` family: its default configuration's translation units (one per
pair of element types, and the entry) compiled for sm_90 exactly as a JIT build compiles them, in parallel, then
the ptxas report and the PTX are read. About 15 s on a 2-core machine."""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
from pathlib import Path

import pytest

from gemmcompare.build import toolchain
from gemmcompare.build.ptxas import parse_ptxas, summarize_for
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.decode import TYPE_PAIRS

pytestmark = pytest.mark.compile

ARCH = "sm_90"
LOAD_WIDTHS = 4  # each instance TU holds one kernel per load width: 16, 8, 4 and 2 bytes


def test_default_decode_compiles_for_sm90_without_spills_and_streams_b(tmp_path, nvcc):
    impl = instantiate(PARAMETRIZED["decode"], {})
    req = impl.build_request(ARCH)
    keep = tmp_path / "ptx"
    keep.mkdir()

    def build(src):
        path = tmp_path / src.filename
        path.write_text(src.text)
        res = toolchain.compile_object(path, ARCH, tmp_path / (src.filename + ".o"), extra_flags=("-keep", f"-keep-dir={keep}"),
                                       include_dirs=req.include_dirs)
        return src.filename, res

    with cf.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        results = dict(pool.map(build, req.sources))
    assert len(results) == len(TYPE_PAIRS) + 1
    for filename, res in results.items():
        log = res.stdout + res.stderr
        assert res.returncode == 0, f"{filename} failed to compile for {ARCH}:\n{log[-4000:]}"
        kernels = parse_ptxas(log)
        if filename.endswith("_entry.cu"):
            assert not kernels  # the dispatcher holds no kernel
            continue
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

    ptx = {p.name: p.read_text() for p in keep.glob("*.ptx")}
    bf16 = next(text for name, text in ptx.items() if "_bf16_bf16" in name)
    f16 = next(text for name, text in ptx.items() if "_f16_f32" in name)
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


GEMV_KERNELS = 3 * LOAD_WIDTHS  # ROWS 1, 2, 4, each at every load width


def test_default_gemv_compiles_for_sm90_without_spills_and_streams_b(tmp_path, nvcc):
    impl = instantiate(PARAMETRIZED["gemv"], {})
    req = impl.build_request(ARCH)
    keep = tmp_path / "ptx"
    keep.mkdir()

    def build(src):
        path = tmp_path / src.filename
        path.write_text(src.text)
        res = toolchain.compile_object(path, ARCH, tmp_path / (src.filename + ".o"), extra_flags=("-keep", f"-keep-dir={keep}"),
                                       include_dirs=req.include_dirs)
        return src.filename, res

    with cf.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        results = dict(pool.map(build, req.sources))
    assert len(results) == len(TYPE_PAIRS) + 1
    for filename, res in results.items():
        log = res.stdout + res.stderr
        assert res.returncode == 0, f"{filename} failed to compile for {ARCH}:\n{log[-4000:]}"
        kernels = parse_ptxas(log)
        if filename.endswith("_entry.cu"):
            assert not kernels
            continue
        assert len(kernels) == GEMV_KERNELS, [k["demangled"] for k in kernels]
        # none spills: the default keeps 8 loads of B (32 registers) in flight per lane, with room to spare
        for k in kernels:
            assert k["spill_stores"] + k["spill_loads"] == 0, (filename, k["demangled"][:120], k["registers"])
        mine = summarize_for(kernels, impl.kernel_filter)
        assert mine and len(mine["kernels"]) == GEMV_KERNELS

    ptx = {p.name: p.read_text() for p in keep.glob("*.ptx")}
    bf16 = next(text for name, text in ptx.items() if "_bf16_bf16" in name)
    # B streams in 16-byte loads that skip L1 with an L2 evict-first policy; the sum is a shuffle butterfly, no
    # shared memory and no atomics (deterministic)
    assert "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32" in bf16
    assert "shfl.sync.bfly.b32" in bf16
    assert not re.search(r"^\s*(@!?%p\d+\s+)?(atom|red)\.", bf16, re.M)
    assert "mma.sync" not in bf16
