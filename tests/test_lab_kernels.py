"""CPU tests of the hand-written kernel ladder's Python side: names, contracts and SKIP reasons, family
parameter expansion and InvalidConfig, the rendered translation units and the experiment specs that
use them. Nothing here compiles or runs a kernel (tests/test_kernels_compile.py compiles them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemmcompare.paths import EXTENSIONS_DIR
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations import PARAMETRIZED, FIXED, instantiate
from gemmcompare.implementations.lab import WARP_TILES, render_wmma_staged
from gemmcompare.dtypes import DType
from gemmcompare.implementations.mma_sync import (CANARY_SKIP, TYPE_PAIRS, MmaSyncConfig, config_from_params,
                                                  derive_warp_tile)
from gemmcompare.plan import make_plan
from gemmcompare.implementations.registry import InvalidConfig, UnbuildableImplementation
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import load_spec, parse_spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
C = BUILTIN_CONTRACTS
ODD = GemmProblem(257, 263, 251)
CUBE = GemmProblem(4096, 4096, 4096)

LAB_FIXED = ["lab.scalar_strided", "lab.scalar_coalesced", "lab.shared_16x16", "lab.register_16x64",
             "lab.register_2d", "lab.wmma_global", "lab.wmma_padded"]
SIMT = LAB_FIXED[:5]
WMMA = LAB_FIXED[5:]


def mma(**params):
    return instantiate(PARAMETRIZED["mma_sync"], params)


def staged(wt=(32, 64)):
    return instantiate(PARAMETRIZED["lab.wmma_staged"], {"warp_tile": wt})


# -- names and registration ------------------------------------------------------------------------


def test_every_rung_is_registered_with_its_source():
    for name in LAB_FIXED:
        assert name in FIXED
        impl = FIXED[name]()
        assert impl.name == name
        (src,) = impl.sources()
        assert src.path.exists(), src.path
        assert impl.entry_symbol == "gc_" + name.replace(".", "_")
        assert f'extern "C" int {impl.entry_symbol}(' in src.read()
        assert re.search(impl.kernel_filter, src.read()), "the kernel filter names the source's __global__"
    assert "lab.wmma_staged" in PARAMETRIZED and "mma_sync" in PARAMETRIZED


def test_lab_sources_are_unique_and_share_one_build_group():
    impls = [FIXED[n]() for n in LAB_FIXED] + [staged(wt) for wt in WARP_TILES]
    reqs = [i.build_request("sm_90") for i in impls]
    assert {r.group for r in reqs} == {"lab"}
    assert {r.include_dirs for r in reqs} == {(str(EXTENSIONS_DIR),)}
    names = [s.filename for r in reqs for s in r.sources]
    assert len(names) == len(set(names))
    assert len({r.entry for r in reqs}) == len(reqs)


def test_kernel_sources_include_no_torch():
    for path in list((EXTENSIONS_DIR / "lab").glob("*.cu*")) + list((EXTENSIONS_DIR / "mma_sync").glob("*.cu*")):
        includes = re.findall(r'#include\s*[<"]([^>"]+)', path.read_text())
        assert includes and not any("torch" in inc or "ATen" in inc for inc in includes), (path, includes)


def test_architectures():
    assert all(FIXED[n]().min_cc == 0 for n in SIMT)
    assert all(FIXED[n]().min_cc == 70 for n in WMMA) and staged().min_cc == 70
    m = mma()
    assert m.min_cc == 80 and not m.arch_specific
    assert m.target_arch(90) == "sm_90" and m.target_arch(80) == "sm_80"


# -- contracts, layouts, constraints ---------------------------------------------------------------


@pytest.mark.parametrize("name", SIMT)
def test_simt_rungs_take_strict_fp32_in_every_layout(name):
    impl = FIXED[name]()
    for layout in ("tt", "tn", "nn", "nt"):
        assert impl.supports(ODD, C[f"f32_strict_{layout}"])
    skip = impl.supports(ODD, C["f16_f32acc_tt"])
    assert not skip and "inputs f16" in skip.reason
    tf32 = impl.supports(ODD, C["f32_tf32_tt"])
    assert not tf32 and "math mode" in tf32.reason


@pytest.mark.parametrize("name", WMMA)
def test_wmma_rungs_take_f16_in_f32_out_tt_and_tn(name):
    impl = FIXED[name]()
    for layout in ("tt", "tn"):
        assert impl.supports(CUBE, C[f"f16_f32acc_{layout}"])
    nn = impl.supports(CUBE, C["f16_f32acc_nn"])
    assert not nn and "layout nn" in nn.reason
    f16out = impl.supports(CUBE, C["f16_f16out_f32acc_tn"])
    assert not f16out and "output f16" in f16out.reason
    f32 = impl.supports(CUBE, C["f32_strict_tt"])
    assert not f32 and "inputs f32" in f32.reason


def test_wmma_global_declares_multiples_of_16():
    impl = FIXED["lab.wmma_global"]()
    s = impl.supports(ODD, C["f16_f32acc_tt"])
    assert not s and "m=257 is not a multiple of 16" in s.reason
    assert not impl.supports(GemmProblem(16, 8, 16), C["f16_f32acc_tn"])  # the capstone's onefrag
    assert impl.supports(GemmProblem(16, 16, 16), C["f16_f32acc_tn"])


def test_wmma_padded_pads_every_shape_to_16():
    impl = FIXED["lab.wmma_padded"]()
    assert impl.constraints.pad_to == (16, 16, 16)
    for (m, n, k), padded in {(31, 29, 37): (32, 32, 48), (17, 65, 19): (32, 80, 32),
                              (73, 61, 67): (80, 64, 80), (257, 263, 251): (272, 272, 256)}.items():
        p = GemmProblem(m, n, k)
        assert impl.supports(p, C["f16_f32acc_tt"])
        assert impl.constraints.padded(p) == GemmProblem(*padded)


def test_grid_limits_are_declared():
    big_n = GemmProblem(64, 65535 * 16 + 1, 64)
    s = FIXED["lab.scalar_strided"]().supports(big_n, C["f32_strict_tt"])
    assert not s and "exceeds the maximum" in s.reason
    assert FIXED["lab.scalar_coalesced"]().supports(big_n, C["f32_strict_tt"])


def test_staged_and_mma_sync_take_any_shape():
    for p in (ODD, GemmProblem(16, 8, 16), GemmProblem(611, 613, 617), GemmProblem(4096, 16, 4096), GemmProblem(1, 1, 1)):
        assert staged().supports(p, C["f16_f32acc_tn"])
        assert mma().supports(p, C["f16_f32acc_tn"])
        assert mma().supports(p, C["f16_f32acc_tt"])


# -- mma_sync parameters ---------------------------------------------------------------------------


def test_mma_sync_default_is_the_h200_guess():
    impl = mma()
    cfg = impl.config
    assert cfg.block == (128, 256, 64) and cfg.warp_tile == (64, 64) and cfg.warps == 8
    assert (cfg.stages, cfg.smem, cfg.group, cfg.mma, cfg.acc, cfg.epilogue) == (3, "swizzle", 8, "m16n8k16", "f32", "plain")
    assert cfg.layouts == ("tn", "tt")
    assert impl.name == ("mma_sync[acc=f32,block=128x256x64,epilogue=plain,group=8,layout=both,mma=m16n8k16,"
                         "smem=swizzle,stages=3,warp_tile=64x64,warps=8]")
    # 3 stages of (128 + 256) x 64 halves, plus the 128-byte alignment slack
    assert cfg.smem_bytes("tn") == 3 * (128 + 256) * 64 * 2 + 112
    assert cfg.registers_floor == 192


def test_warps_and_warp_tile_resolve_to_one_name():
    a = mma(block=(128, 128, 32), warps=4)
    b = mma(block=(128, 128, 32), warp_tile=(64, 64))
    c = mma(block=(128, 128, 32), warps=4, warp_tile=(64, 64))
    assert a.name == b.name == c.name
    assert a.config.warp_tile == (64, 64)


@pytest.mark.parametrize("block,warps,tile", [
    ((128, 256, 32), 8, (64, 64)), ((256, 128, 32), 8, (64, 64)), ((128, 128, 32), 4, (64, 64)),
    ((128, 128, 32), 8, (32, 64)), ((64, 64, 32), 4, (32, 32)), ((128, 128, 32), 16, (32, 32)),
])
def test_derive_warp_tile(block, warps, tile):
    assert derive_warp_tile(block, warps) == tile


@pytest.mark.parametrize("params,reason", [
    ({"block": (128, 256, 64), "stages": 5}, "shared memory"),
    ({"block": (128, 256, 48)}, "power of two"),
    ({"warp_tile": (64, 128)}, "registers"),
    ({"warp_tile": (40, 64)}, "multiple of 16"),
    ({"block": (128, 256, 64), "warp_tile": (64, 96)}, "does not divide"),
    ({"block": (128, 128, 32), "warps": 8, "warp_tile": (64, 64)}, "does not match"),
    ({"block": (128, 16, 32), "warp_tile": (64, 16), "layout": "tt"}, "BN >= 32"),
    ({"stages": 0}, "stages"),
    ({"group": 0}, "group"),
    ({"block": (512, 512, 32), "warp_tile": (32, 32)}, "more than a block's 32"),
    ({"block": (128, 128, 32), "warps": 3}, "cannot split"),
])
def test_invalid_combinations_are_skips_with_the_reason(params, reason):
    impl = mma(**params)
    assert isinstance(impl, UnbuildableImplementation), impl.name
    assert reason in impl.reason
    s = impl.supports(CUBE, C["f16_f32acc_tn"])
    assert not s and reason in s.reason
    with pytest.raises(InvalidConfig):
        config_from_params(params)


def test_largest_valid_pipelines_fit_227_kb():
    assert not isinstance(mma(block=(128, 256, 64), stages=4), UnbuildableImplementation)  # 192 KB
    assert not isinstance(mma(block=(128, 256, 32), stages=8), UnbuildableImplementation)  # 192 KB
    padded = mma(block=(128, 256, 64), stages=4, smem="padded")  # 4 x 384 x 72 x 2 = 216 KB
    assert not isinstance(padded, UnbuildableImplementation)
    assert padded.config.smem_bytes("tn") <= 227 * 1024


def test_layout_param_selects_what_is_built_and_supported():
    tn = mma(layout="tn")
    assert tn.supports(CUBE, C["f16_f32acc_tn"])
    s = tn.supports(CUBE, C["f16_f32acc_tt"])
    assert not s and "layout tt" in s.reason
    assert [src.filename for src in tn.sources()] == [
        "mma_sync_128x256x64_w64x64_s3_swizzle_g8_k16_f32acc_plain_tn.cu",  # f16 -> f32: the names it always had
        "mma_sync_128x256x64_w64x64_s3_swizzle_g8_k16_f32acc_plain_tn_bf16.cu",
        "mma_sync_128x256x64_w64x64_s3_swizzle_g8_k16_f32acc_plain_tn_bf16_bf16out.cu",
        "mma_sync_128x256x64_w64x64_s3_swizzle_g8_k16_f32acc_plain_tn_entry.cu",
    ]
    both = mma()
    assert len(both.sources()) == 7  # 2 layouts x 3 pairs of types + the entry
    assert tn.entry_symbol != both.entry_symbol
    # the tn instance TU is shared (same name, same text) by both implementations: the builder de-duplicates it
    assert tn.sources()[0] == both.sources()[0]


def test_f16_accumulate_canary_claims_the_f32_contracts():
    canary = mma(acc="f16")
    assert canary.supports(CUBE, C["f16_f32acc_tn"]), "the canary must run under the f32-accumulate contract"
    assert "acc=f16" in canary.name and "canary" in canary.description
    f16out = canary.supports(CUBE, C["f16_f16acc_tn"])
    assert not f16out and "output f16" in f16out.reason  # it writes f32
    assert "true" in canary.sources()[0].text.split("Config<")[1].split(">")[0]  # ACC_F16 = true


@pytest.mark.parametrize("contract", ["bf16_f32acc_tn", "bf16_bf16out_f32acc_tn", "bf16_f32acc_tt",
                                      "bf16_bf16out_f32acc_tt"])
def test_f16_accumulate_canary_is_f16_only(contract):
    canary = mma(acc="f16")
    s = canary.supports(CUBE, C[contract])
    assert not s and s.reason == CANARY_SKIP and "f16-only canary" in s.reason
    assert canary.config.type_pairs == ((DType.F16, DType.F32),)
    assert not any("bf16" in src.filename for src in canary.sources())  # no bf16 TU is built for it
    assert "__nv_bfloat16" not in canary.config.render_entry() and "GC_BF16" not in canary.config.render_entry()
    with pytest.raises(ValueError, match="not built for bf16->f32"):
        canary.config.render_instance("tn", (DType.BF16, DType.F32))


# -- BF16 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"mma": "m16n8k8"}, {"smem": "padded"}, {"smem": "row", "stages": 2},
                                    {"block": (128, 128, 32), "warps": 4, "layout": "tt"}])
def test_f32_accumulate_configurations_take_bf16(params):
    impl = mma(**params)
    for name in ("bf16_f32acc", "bf16_bf16out_f32acc", "f16_f32acc"):
        for layout in impl.config.layouts:
            assert impl.supports(ODD, C[f"{name}_{layout}"]), (name, layout)
    f16out = impl.supports(CUBE, C["f16_f16out_f32acc_tn"])
    assert not f16out and "output f16" in f16out.reason  # f16 output: never built
    f16acc = impl.supports(CUBE, C["f16_f16acc_tn"])
    assert not f16acc


def test_f16_inputs_with_bf16_output_are_not_built():
    exp = parse_spec("""\
name: mixed
problems: [{m: 64, n: 64, k: 64}]
contracts: [{name: f16_in_bf16_out, a: f16, c: bf16, layout: tn}]
implementations: [mma_sync]
""", "mixed.yaml")
    (impl,) = exp.implementations
    s = impl.supports(ODD, exp.contracts[0])
    assert not s and "inputs f16 with output bf16 not supported" in s.reason and "bf16 -> bf16" in s.reason


def test_bf16_bias_relu_runs_the_fused_epilogue():
    exp = parse_spec("""\
name: fused
problems: [{m: 64, n: 64, k: 64}]
contracts: [{name: bf16_bias_relu_tn, a: bf16, c: bf16, layout: tn, epilogue: bias_relu}]
implementations: [mma_sync: {epilogue: bias_relu}, mma_sync]
""", "fused.yaml")
    fused, plain = exp.implementations
    assert fused.supports(ODD, exp.contracts[0])
    assert not plain.supports(ODD, exp.contracts[0])


def _plan(spec_text):
    plan = make_plan(parse_spec(spec_text, "bf16.yaml"))
    return [c for c in plan.cells if c.implementation.family == "mma_sync"]


BF16_SPEC = """\
name: bf16
problems:
  - {m: 257, n: 263, k: 251}
  - {m: 1024, n: 1024, k: 1024}
contracts: [CONTRACTS]
implementations:
  - mma_sync
  - mma_sync: {mma: [m16n8k16, m16n8k8], smem: [row, padded, swizzle], layout: tn, block: [128, 128, 32], warps: 4}
  - mma_sync: {stages: [1, 2, 4], block: [64, 64, 32], warps: 4, layout: LAYOUT}
"""


@pytest.mark.parametrize("contract,layout,variants", [("bf16_bf16out_f32acc_tn", "tn", 10), ("bf16_f32acc_tn", "both", 10),
                                                      ("bf16_bf16out_f32acc_tt", "tt", 4)])
def test_a_bf16_spec_plans_no_mma_sync_skips(contract, layout, variants):
    cells = _plan(BF16_SPEC.replace("CONTRACTS", contract).replace("LAYOUT", layout))
    if layout == "tt":  # the tn-only variants skip a tt contract for its layout, not its types
        cells = [c for c in cells if c.implementation.config.layouts != ("tn",)]
    assert len(cells) == 2 * variants  # 2 problems
    skips = [f"{c.implementation.name}: {c.support.reason}" for c in cells if not c.support]
    assert not skips, skips


def test_a_bf16_spec_skips_only_the_canary_with_its_reason():
    cells = _plan(BF16_SPEC.replace("CONTRACTS", "bf16_bf16out_f32acc_tn, bf16_f32acc_tn").replace("LAYOUT", "tn")
                  + "  - mma_sync: {acc: f16}\n")
    skips = {c.implementation.name: c.support.reason for c in cells if not c.support}
    assert list(skips) == [mma(acc="f16").name] and skips[mma(acc="f16").name] == CANARY_SKIP
    assert sum(1 for c in cells if c.support) == 2 * 2 * 10  # 2 problems x 2 contracts x 10 f32-acc variants


def test_bf16_instances_render_the_types():
    cfg = config_from_params({"layout": "tn"})
    f16, bf16, bf16out = (cfg.render_instance("tn", t) for t in TYPE_PAIRS)
    sym = "gc_mma_sync_128x256x64_w64x64_s3_swizzle_g8_k16_f32acc_plain_tn"
    assert f"{sym}_tag, __half, float>(args" in f16 and "bf16" not in f16
    assert f"{sym}_bf16_tag, __nv_bfloat16, float>(args" in bf16 and f'"{sym}_bf16_launch"' in bf16
    assert f"{sym}_bf16_bf16out_tag, __nv_bfloat16, __nv_bfloat16>(args" in bf16out
    assert "// bf16 A and B, bf16 C" in bf16out
    # one Config (tile geometry) for every pair of types: only the launcher's types differ
    configs = {text.split("gc::mma::Config<")[1].split(">;")[0] for text in (f16, bf16, bf16out)}
    assert len(configs) == 1


def test_bias_relu_is_its_own_contract():
    fused, plain = mma(epilogue="bias_relu"), mma()
    assert fused.supports(CUBE, C["f16_f32acc_bias_relu_tn"]) and fused.supports(CUBE, C["f16_f32acc_bias_relu_tt"])
    assert not fused.supports(CUBE, C["f16_f32acc_tn"])
    assert not plain.supports(CUBE, C["f16_f32acc_bias_relu_tn"])


# -- rendering -------------------------------------------------------------------------------------

GOLDEN_TN = """\
// Generated by gemmcompare/implementations/mma_sync.py: one instantiation of mma_sync.cuh.
// 128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu, layout tn (A row-major, B column-major, C row-major),
// f16 A and B, f32 C
#include "mma_sync/mma_sync.cuh"

struct gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_tag;  // names the kernels in the ptxas report
using gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_config = gc::mma::Config<128, 256, 32, 64, 64, 4, gc::mma::Smem::Padded, 4, 8, true, gc::mma::Epi::BiasRelu, true>;

extern "C" int gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_launch(const gc_gemm_args* args, char* err, size_t err_len) {
  return gc::mma::launch<gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_config, gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_tag, __half, float>(args, "gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_launch", err, err_len);
}

extern "C" int gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_launch_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, size_t err_len) {
  return gc::mma::launch<gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_config, gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_tag, __half, float>(args, "gc_mma_sync_128x256x32_w64x64_s4_padded_g4_k8_f16acc_bias_relu_tn_launch", err, err_len, out);
}
"""


def test_rendered_instance_matches_golden():
    cfg = config_from_params({"block": (128, 256, 32), "stages": 4, "smem": "padded", "group": 4, "mma": "m16n8k8",
                              "acc": "f16", "epilogue": "bias_relu", "layout": "tn"})
    assert cfg.render_instance("tn") == GOLDEN_TN


def test_rendered_entry_dispatches_on_b_order_and_types():
    cfg = MmaSyncConfig()
    text = cfg.render_entry()
    assert f'extern "C" int {cfg.symbol()}(const gc_gemm_args* args' in text
    f16, bf16, bf16out = TYPE_PAIRS
    assert (f"if (args->order_b == GC_COL && args->dtype_a == GC_F16 && args->dtype_c == GC_F32) "
            f"return {cfg.symbol('tn')}(args, err, err_len);") in text
    assert (f"if (args->order_b == GC_ROW && args->dtype_a == GC_F16 && args->dtype_c == GC_F32) "
            f"return {cfg.symbol('tt')}(args, err, err_len);") in text
    assert (f"if (args->order_b == GC_COL && args->dtype_a == GC_BF16 && args->dtype_c == GC_F32) "
            f"return {cfg.symbol('tn', bf16)}(args, err, err_len);") in text
    assert (f"if (args->order_b == GC_ROW && args->dtype_a == GC_BF16 && args->dtype_c == GC_BF16) "
            f"return {cfg.symbol('tt', bf16out)}(args, err, err_len);") in text
    assert text.count("return gc_mma_sync_") == 2 * 6  # run and occupancy: 2 layouts x 3 pairs each
    assert "types f16->f32, bf16->f32, bf16->bf16 only" in text
    assert f'extern "C" int {cfg.symbol()}_occupancy(const gc_gemm_args* args, gc_occupancy* out' in text
    assert (f"if (args->order_b == GC_COL && args->dtype_a == GC_BF16 && args->dtype_c == GC_BF16) "
            f"return {cfg.symbol('tn', bf16out)}_occupancy(args, out, err, err_len);") in text
    assert len({cfg.symbol(l, t) for l in ("tn", "tt") for t in TYPE_PAIRS}) == 6
    assert "#include \"gemmcompare/gemm_abi.h\"" in text and "mma_sync.cuh" not in text
    single = config_from_params({"layout": "tn"})
    symbols = {single.symbol(), single.symbol("tn")}
    assert len(symbols) == 2, "a single-layout entry must not collide with its launcher"
    tt = config_from_params({"layout": "tt"}).render_instance("tt")
    assert tt.rstrip().count("\n") == GOLDEN_TN.rstrip().count("\n")
    assert ", false>;" in tt  # B_COL = false


def test_kernel_filter_matches_the_mangled_kernel_names():
    cfg = MmaSyncConfig()
    ident = cfg.ident
    for layout, bcol in (("tn", 1), ("tt", 0)):
        tag = f"gc_mma_sync_{ident}_{layout}_tag"
        mangled = (f"_ZN2gc3mma11gemm_kernelINS0_6ConfigILi128ELi256ELi64ELi64ELi64ELi3ELNS0_4SmemE2ELi8ELi16ELb0E"
                   f"LNS0_3EpiE0ELb{bcol}EEELb1E{len(tag)}{tag}EEvNS0_6ParamsE")
        assert re.search(cfg.kernel_filter, mangled)
        other = config_from_params({"stages": 4})
        assert not re.search(other.kernel_filter, mangled)
    only_tn = config_from_params({"layout": "tn"})
    assert not re.search(only_tn.kernel_filter, f"gc_mma_sync_{ident}_tt_tag")


def test_a_rows_kernel_filter_is_its_own_types():
    impl = mma()
    ident = impl.config.ident
    names = {t: f"gc_mma_sync_{ident}_tn{s}_tag" for t, s in zip(TYPE_PAIRS, ("", "_bf16", "_bf16_bf16out"))}
    assert all(re.search(impl.kernel_filter, n) for n in names.values())  # the implementation's: every kernel
    for contract, mine in (("f16_f32acc_tn", TYPE_PAIRS[0]), ("bf16_f32acc_tn", TYPE_PAIRS[1]),
                           ("bf16_bf16out_f32acc_tn", TYPE_PAIRS[2])):
        rx = impl.kernel_filter_for(C[contract])
        assert [t for t, n in names.items() if re.search(rx, n)] == [mine], contract


def test_wmma_staged_family():
    for wt in WARP_TILES:
        impl = staged(wt)
        assert impl.name == f"lab.wmma_staged[warp_tile={wt[0]}x{wt[1]}]"
        (src,) = impl.sources()
        assert src.text == render_wmma_staged(wt)
        assert f"gc::lab::staged::launch<{wt[0]}, {wt[1]}, " in src.text
        assert re.search(impl.kernel_filter, f"gc_lab_wmma_staged_{wt[0]}x{wt[1]}_tag")
    bad = staged((16, 16))
    assert isinstance(bad, UnbuildableImplementation) and "warp_tile" in bad.reason
    assert staged(None).name == "lab.wmma_staged[warp_tile=32x64]"  # the spec's default


# -- the experiment specs --------------------------------------------------------------------------


def _names(exp):
    return [i.name for i in exp.implementations]


def test_lab_ladder_spec():
    exp = load_spec(EXPERIMENTS / "lab_ladder.yaml")
    assert {c.name for c in exp.contracts} == {"f32_strict_tt", "f16_f32acc_tt"}
    names = _names(exp)
    for n in LAB_FIXED:
        assert n in names
    assert sum(n.startswith("lab.wmma_staged[") for n in names) == 3
    assert {e.problem for e in exp.problems} == {ODD, CUBE}
    assert not [i for i in exp.implementations if isinstance(i, UnbuildableImplementation)]


def test_capstone_gate_spec():
    exp = load_spec(EXPERIMENTS / "capstone_gate.yaml")
    assert [c.name for c in exp.contracts] == ["f16_f32acc_tn"]
    cases = {e.name: (e.problem, e.fixtures, e.time) for e in exp.problems}
    assert list(cases) == ["unit", "onefrag", "small", "odd", "skinny", "square", "adversarial", "perf"]
    assert cases["unit"][:2] == (GemmProblem(16, 16, 16), ("exact_integers",))
    assert cases["onefrag"][:2] == (GemmProblem(16, 8, 16), ("exact_integers",))
    assert cases["odd"][0] == GemmProblem(611, 613, 617) and cases["adversarial"][1] == ("adversarial",)
    assert [n for n, c in cases.items() if c[2]] == ["perf"]
    names = _names(exp)
    assert "lab.register_2d" not in names and "library.cublas" in names
    assert any(n.startswith("mma_sync[") for n in names)
    for impl in exp.implementations:
        assert not isinstance(impl, UnbuildableImplementation)
        if impl.name != "library.cublas":
            assert impl.supports(GemmProblem(16, 16, 16), C["f16_f32acc_tn"]) or impl.name == "lab.wmma_global"


def test_sweep_spec_stays_small_and_valid():
    exp = load_spec(EXPERIMENTS / "mma_sync_sweep.yaml")
    variants = [i for i in exp.implementations if i.name.startswith("mma_sync[")]
    assert 12 <= len(variants) <= 24
    assert not [i for i in variants if isinstance(i, UnbuildableImplementation)]
    assert all(i.config.layouts == ("tn",) for i in variants)


def test_k_sweep_has_both_accumulators():
    exp = load_spec(EXPERIMENTS / "k_sweep_precision.yaml")
    accs = {i.config.acc for i in exp.implementations if i.name.startswith("mma_sync[")}
    assert accs == {"f32", "f16"}
