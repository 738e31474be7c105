"""CPU tests of the `decode` family's Python side (M <= 16, memory-bound): names, contracts and SKIP reasons,
parameters and InvalidConfig, the rendered translation units, the tune grid and the study spec that uses it.
Nothing here compiles or runs a kernel: tests/test_decode_compile.py compiles the rendered units (that the header
defines what they call, that they include no torch, that the Python side's numbers are the header's, what the
PTX holds), tests/test_gpu_decode.py runs them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemmcompare.cli import main
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.device import DeviceInfo
from gemmcompare.dtypes import DType
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.decode import TYPE_PAIRS, DecodeConfig, config_from_params, pair_tag
from gemmcompare.implementations.registry import InvalidConfig, UnbuildableImplementation
from gemmcompare.paths import EXTENSIONS_DIR
from gemmcompare.plan import make_plan
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import load_spec, parse_spec
from gemmcompare.tuning.tuned import auto_grid

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
C = BUILTIN_CONTRACTS
DECODE = GemmProblem(16, 4096, 4096)
GEMV = GemmProblem(1, 14336, 4096)
ODD = GemmProblem(13, 1000, 4100)  # ragged column tile, K tail, K % 8 != 0 (ld not 16-byte aligned, tight)
H200 = DeviceInfo("NVIDIA H200", (9, 0), 132, 60 * 2**20, 141 * 2**30)
A100 = DeviceInfo("NVIDIA A100", (8, 0), 108, 40 * 2**20, 80 * 2**30)


def decode(**params):
    return instantiate(PARAMETRIZED["decode"], params)


# -- names, sources, architectures -----------------------------------------------------------------


def test_defaults_are_the_h200_guess_and_name_the_row():
    impl = decode()
    assert impl.name == "decode[cols=32,splits=auto,unroll=2,warps=8]"
    cfg = impl.config
    assert (cfg.cols, cfg.warps, cfg.unroll, cfg.splits) == (32, 8, 2, "auto")
    assert cfg.threads == 256 and cfg.tiles == 4
    assert impl.dynamic_smem_bytes() == 8 * 16 * (32 + 8) * 4  # the warps' partial sums
    assert cfg.registers_floor == 2 * 4 * 4 + 2 * 8 + 4 * 4  # loaded B + loaded A + accumulators
    assert decode(splits=4, cols=64).name == "decode[cols=64,splits=4,unroll=2,warps=8]"


def test_a_fixed_split_needs_clusters_auto_does_not():
    assert decode().min_cc == 80 and decode(splits=1).min_cc == 80  # mma.sync bf16: sm_80
    for s in (2, 4, 8):
        impl = decode(splits=s)
        assert impl.min_cc == 90 and not impl.arch_specific
        assert impl.check(DECODE, C["bf16_bf16out_f32acc_tn"], H200)
        skip = impl.check(DECODE, C["bf16_bf16out_f32acc_tn"], A100)
        assert not skip and "9.0+" in skip.reason
    assert decode().check(DECODE, C["bf16_bf16out_f32acc_tn"], A100)
    assert decode().target_arch(90) == "sm_90" and decode().target_arch(80) == "sm_80"


def test_sources_one_tu_per_pair_of_types_and_an_entry():
    impl = decode()
    req = impl.build_request("sm_90")
    assert req.group == "decode" and req.include_dirs == (str(EXTENSIONS_DIR),) and not req.has_workspace
    names = [s.filename for s in req.sources]
    assert names == [f"decode_c32_w8_u2_sauto_{pair_tag(t)}.cu" for t in TYPE_PAIRS] + ["decode_c32_w8_u2_sauto_entry.cu"]
    other = decode(cols=64).build_request("sm_90")
    assert not set(names) & {s.filename for s in other.sources}  # two configurations share one extension
    assert impl.entry_symbol == "gc_decode_c32_w8_u2_sauto" != other.entry


# -- contracts and shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize("contract", ["f16_f32acc_tn", "f16_f16out_f32acc_tn", "bf16_f32acc_tn",
                                      "bf16_bf16out_f32acc_tn", "bf16_bf16out_f32acc_tn_aligned"])
def test_takes_f16_and_bf16_with_f32_or_same_type_output_tn(contract):
    impl = decode()
    for p in (DECODE, GEMV, ODD, GemmProblem(1, 1, 1), GemmProblem(16, 8, 7), GemmProblem(1, 4096, 14336)):
        assert impl.supports(p, C[contract]), (p, contract)


@pytest.mark.parametrize("contract, reason", [
    ("f16_f32acc_tt", "layout tt not supported"),
    ("bf16_bf16out_f32acc_nn", "layout nn not supported"),
    ("f32_strict_tn", "inputs f32"),
    ("f16_f16acc_tn", "accumulator f16"),
    ("f32_tf32_tn", "inputs f32"),
    ("f16_f32acc_bias_relu_tn", "epilogue bias_relu"),
])
def test_other_contracts_are_skips_with_the_reason(contract, reason):
    s = decode().supports(DECODE, C[contract])
    assert not s and reason in s.reason


def test_mixed_input_and_output_types_are_not_built():
    impl = decode()
    for c in C.values():
        if c.a in (DType.F16, DType.BF16) and c.c in (DType.F16, DType.BF16) and c.c != c.a and c.layout == "tn":
            s = impl.supports(DECODE, c)
            assert not s and "not supported" in s.reason, c.name


@pytest.mark.parametrize("m", [17, 64, 2048])
def test_m_above_16_is_a_skip_that_says_why(m):
    s = decode().supports(GemmProblem(m, 4096, 4096), C["bf16_bf16out_f32acc_tn"])
    assert not s and f"m={m} > 16" in s.reason and "memory-bound" in s.reason and "M <= 16" in s.reason
    assert decode().supports(GemmProblem(16, 4096, 4096), C["bf16_bf16out_f32acc_tn"])


def test_kernel_filter_is_the_contracts_pair():
    impl = decode()
    tags = {t: f"_ZN2gc6decode13decode_kernelINS0_6ConfigILi32ELi8ELi2ELi0EEE13__nv_bfloat16S4_Li16E"
               f"{len(impl.config.tag(t))}{impl.config.tag(t)}EEvNS0_6ParamsIT0_T1_EE" for t in TYPE_PAIRS}
    assert all(re.search(impl.kernel_filter, name) for name in tags.values())
    for pair in TYPE_PAIRS:
        contract = next(c for c in C.values() if (c.a, c.c) == pair and c.layout == "tn" and c.storage.value == "tight"
                        and c.acc is DType.F32 and c.epilogue.value == "none")
        mine = impl.kernel_filter_for(contract)
        assert [t for t, name in tags.items() if re.search(mine, name)] == [pair]
    assert not re.search(impl.kernel_filter, tags[TYPE_PAIRS[0]].replace("c32_w8", "c64_w8"))


# -- parameters ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("params, reason", [
    ({"cols": 12}, "cols=12 must be a multiple of 8"),
    ({"cols": 256}, "cols=256"),
    ({"warps": 0}, "warps=0 must be 1..16"),
    ({"warps": 17}, "warps=17"),
    ({"unroll": 0}, "unroll=0 must be 1..8"),
    ({"splits": 3}, "splits=3 must be one of"),
    ({"splits": 16}, "portable cluster"),
    ({"cols": 128, "unroll": 4}, "registers per thread"),
    ({"cols": 64, "unroll": 4}, "192 registers per thread"),  # ptxas: 255 registers and spills
])
def test_invalid_configurations_are_skips_with_the_reason(params, reason):
    impl = decode(**params)
    assert isinstance(impl, UnbuildableImplementation), impl.name
    assert reason in impl.reason
    s = impl.supports(DECODE, C["bf16_bf16out_f32acc_tn"])
    assert not s and reason in s.reason
    with pytest.raises(InvalidConfig):
        config_from_params(params)


@pytest.mark.parametrize("entry, message", [
    ("decode: {cols: 12}", "cols=12 must be a multiple of 8"),
    ("decode: {splits: 3}", "splits must be one of"),
    ("decode: {colz: 32}", "colz"),
])
def test_bad_parameters_in_a_spec_are_exit_2_naming_the_key(tmp_path, capsys, entry, message):
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"name: bad\nproblems: [{{m: 16, n: 4096, k: 4096}}]\ncontracts: [bf16_bf16out_f32acc_tn]\n"
                    f"implementations:\n  - {entry}\n")
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and "bad.yaml:" in err and "Traceback" not in err


# -- rendering --------------------------------------------------------------------------------------------


def test_rendered_instance_instantiates_the_config_and_types():
    cfg = DecodeConfig(cols=64, warps=4, unroll=4, splits=8)
    text = cfg.render_instance((DType.BF16, DType.BF16))
    assert '#include "decode/decode_gemm.cuh"' in text
    assert "gc::decode::Config<64, 4, 4, 8>" in text
    assert "gc::decode::launch<gc_decode_c64_w4_u4_s8_config, gc_decode_c64_w4_u4_s8_bf16_bf16_tag, __nv_bfloat16, " \
           "__nv_bfloat16>" in text
    assert 'extern "C" int gc_decode_c64_w4_u4_s8_bf16_bf16_launch(' in text
    assert 'extern "C" int gc_decode_c64_w4_u4_s8_bf16_bf16_launch_occupancy(' in text
    assert "Config<32, 8, 2, 0>" in DecodeConfig().render_instance((DType.F16, DType.F32))  # auto is 0
    assert "__half, float>" in DecodeConfig().render_instance((DType.F16, DType.F32))
    with pytest.raises(ValueError, match="not built for f16->bf16"):
        cfg.render_instance((DType.F16, DType.BF16))


def test_rendered_entry_dispatches_on_the_types():
    cfg = DecodeConfig()
    text = cfg.render_entry()
    for pair, (a, c) in zip(TYPE_PAIRS, [("GC_F16", "GC_F32"), ("GC_F16", "GC_F16"), ("GC_BF16", "GC_F32"),
                                         ("GC_BF16", "GC_BF16")]):
        sym = cfg.symbol(pair)
        assert f"if (args->dtype_a == {a} && args->dtype_c == {c}) return {sym}(args, err, err_len);" in text
        assert f"return {sym}_occupancy(args, out, err, err_len);" in text
    assert f'extern "C" int {cfg.symbol()}(const gc_gemm_args* args' in text
    assert "built for A/B -> C types f16->f32, f16->f16, bf16->f32, bf16->bf16 only" in text


# -- tuning and the study ------------------------------------------------------------------------------------


def test_the_tune_grid_is_valid_and_distinct():
    grid = auto_grid("decode", {})
    assert grid == {"cols": [16, 32, 64], "unroll": [1, 2], "splits": [1, 2, 4, 8]}  # written out: 3 x 2 x 4
    grid["cols"].append(128)
    assert auto_grid("decode", {})["cols"] == [16, 32, 64]  # a copy: the family's grid is not the caller's to change
    exp = parse_spec("name: t\nproblems: [{m: 16, n: 4096, k: 4096}]\ncontracts: [bf16_bf16out_f32acc_tn]\n"
                     "implementations:\n  - decode: {tune: auto}\n", "t.yaml")
    (tuned,) = exp.implementations
    assert tuned.name == "decode.tuned[tune=auto]"
    assert len(tuned.candidates) == 24 == len({c.name for c in tuned.candidates})
    assert not [c for c in tuned.candidates if isinstance(c, UnbuildableImplementation)]
    assert {(c.config.cols, c.config.unroll, c.config.splits) for c in tuned.candidates} == {
        (cols, unroll, splits) for cols in (16, 32, 64) for unroll in (1, 2) for splits in (1, 2, 4, 8)}
    assert tuned.supports(DECODE, C["bf16_bf16out_f32acc_tn"])
    s = tuned.supports(GemmProblem(64, 4096, 4096), C["bf16_bf16out_f32acc_tn"])
    assert not s and "m=64 > 16" in s.reason


def test_llm_shapes_runs_decode_at_m_up_to_16_and_skips_the_rest():
    exp = load_spec(EXPERIMENTS / "llm_shapes.yaml")
    decode = [i for i in exp.implementations if i.family == "decode"]
    assert [i.name for i in decode] == ["decode.tuned[tune=cols+splits@3d1ada,unroll=1]"]
    # the grid the partial run's picks call for (partial-4e01d11/picks.md): unroll 1, cols 16-64, splits 1-2
    assert {(c.config.cols, c.config.unroll, c.config.splits) for c in decode[0].candidates} == {
        (cols, 1, splits) for cols in (16, 32, 64) for splits in (1, 2)}
    cells = [c for c in make_plan(exp).cells if c.implementation.family == "decode"]
    runs = {(c.entry.problem.m, bool(c.support)) for c in cells}
    assert runs == {(1, True), (16, True), (64, False), (128, False), (2048, False), (8192, False)}
