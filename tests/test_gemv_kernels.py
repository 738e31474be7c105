"""CPU tests of the `gemv` family's Python side (M <= 4, one warp per column of B): names, contracts and SKIP
reasons, parameters and InvalidConfig, the rendered translation units, the tune grid. Nothing here compiles or
runs a kernel: tests/test_decode_compile.py compiles the rendered units (what they call, what they include, the
header's numbers, the PTX), tests/test_gpu_decode.py runs them."""

from __future__ import annotations

import re

import pytest

from gemmcompare.cli import main
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.device import DeviceInfo
from gemmcompare.dtypes import DType
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.decode import TYPE_PAIRS, pair_tag
from gemmcompare.implementations.gemv import GemvConfig, config_from_params
from gemmcompare.implementations.registry import InvalidConfig, UnbuildableImplementation
from gemmcompare.paths import EXTENSIONS_DIR
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import parse_spec
from gemmcompare.tuning.tuned import auto_grid

C = BUILTIN_CONTRACTS
GEMV = GemmProblem(1, 4096, 4096)
H200 = DeviceInfo("NVIDIA H200", (9, 0), 132, 60 * 2**20, 141 * 2**30)
T4 = DeviceInfo("Tesla T4", (7, 5), 40, 4 * 2**20, 16 * 2**30)


def gemv(**params):
    return instantiate(PARAMETRIZED["gemv"], params)


def test_defaults_name_the_row_and_share_decodes_extension():
    impl = gemv()
    assert impl.name == "gemv[unroll=8,warps=4]"
    assert (impl.config.warps, impl.config.unroll, impl.config.threads) == (4, 8, 128)
    req = impl.build_request("sm_90")
    assert req.group == "decode" and req.include_dirs == (str(EXTENSIONS_DIR),)
    names = [s.filename for s in req.sources]
    assert names == [f"gemv_w4_u8_{pair_tag(t)}.cu" for t in TYPE_PAIRS] + ["gemv_w4_u8_entry.cu"]
    # no file name or symbol in common with a decode configuration (they are linked into one extension)
    decode = instantiate(PARAMETRIZED["decode"], {}).build_request("sm_90")
    assert not set(names) & {s.filename for s in decode.sources}
    assert impl.entry_symbol == "gc_gemv_w4_u8" and impl.dynamic_smem_bytes() is None


def test_runs_on_sm80_up_and_m_up_to_4():
    contract = C["bf16_bf16out_f32acc_tn"]
    assert gemv().check(GEMV, contract, H200)
    skip = gemv().check(GEMV, contract, T4)
    assert not skip and "8.0+" in skip.reason
    for m in (1, 2, 3, 4):
        assert gemv().supports(GemmProblem(m, 1000, 4099), contract)
    s = gemv().supports(GemmProblem(5, 4096, 4096), contract)
    assert not s and "m=5 > 4" in s.reason and "decode" in s.reason


@pytest.mark.parametrize("contract", ["bf16_bf16out_f32acc_tn", "bf16_f32acc_tn", "f16_f32acc_tn",
                                      "f16_f16out_f32acc_tn", "bf16_bf16out_f32acc_tn_aligned"])
def test_takes_f16_and_bf16_with_f32_or_same_type_output_tn(contract):
    assert gemv().supports(GEMV, C[contract])


@pytest.mark.parametrize("contract, reason", [
    ("bf16_bf16out_f32acc_nn", "layout nn not supported"),
    ("f32_strict_tn", "inputs f32"),
    ("f16_f16acc_tn", "accumulator f16"),
    ("f16_f32acc_bias_relu_tn", "epilogue bias_relu"),
])
def test_other_contracts_are_skips_with_the_reason(contract, reason):
    s = gemv().supports(GEMV, C[contract])
    assert not s and reason in s.reason


def test_kernel_filter_is_the_contracts_pair():
    impl = gemv()
    f = impl.kernel_filter_for(C["bf16_bf16out_f32acc_tn"])
    assert re.search(f, "void gc::gemv::gemv_kernel<..., gc_gemv_w4_u8_bf16_bf16_tag>")
    assert not re.search(f, "void gc::gemv::gemv_kernel<..., gc_gemv_w4_u8_f16_f32_tag>")
    assert not re.search(f, "void gc::decode::decode_kernel<..., gc_decode_c32_w8_u2_sauto_bf16_bf16_tag>")


@pytest.mark.parametrize("params, reason", [
    ({"warps": 0}, "warps=0 must be 1..32"),
    ({"warps": 33}, "warps=33"),
    ({"unroll": 0}, "unroll=0 must be 1..16"),
    ({"unroll": 17}, "unroll=17"),
])
def test_invalid_configurations_are_skips_with_the_reason(params, reason):
    impl = gemv(**params)
    assert isinstance(impl, UnbuildableImplementation), impl.name
    assert reason in impl.reason
    with pytest.raises(InvalidConfig):
        config_from_params(params)


@pytest.mark.parametrize("entry, message", [
    ("gemv: {warps: 64}", "warps=64 must be 1..32"),
    ("gemv: {unrol: 4}", "unrol"),
])
def test_bad_parameters_in_a_spec_are_exit_2_naming_the_key(tmp_path, capsys, entry, message):
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"name: bad\nproblems: [{{m: 1, n: 4096, k: 4096}}]\ncontracts: [bf16_bf16out_f32acc_tn]\n"
                    f"implementations:\n  - {entry}\n")
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and "bad.yaml:" in err and "Traceback" not in err


def test_rendered_units_instantiate_the_config_and_dispatch_on_the_types():
    cfg = GemvConfig(warps=8, unroll=16)
    text = cfg.render_instance((DType.BF16, DType.BF16))
    assert '#include "decode/gemv.cuh"' in text and "gc::gemv::Config<8, 16>" in text
    assert "gc::gemv::launch<gc_gemv_w8_u16_config, gc_gemv_w8_u16_bf16_bf16_tag, __nv_bfloat16, __nv_bfloat16>" in text
    assert 'extern "C" int gc_gemv_w8_u16_bf16_bf16_launch_occupancy(' in text
    with pytest.raises(ValueError, match="not built for f16->bf16"):
        cfg.render_instance((DType.F16, DType.BF16))
    entry = cfg.render_entry()
    for pair in TYPE_PAIRS:
        assert f"return {cfg.symbol(pair)}(args, err, err_len);" in entry


def test_the_tune_grid_is_valid_and_distinct():
    assert auto_grid("gemv", {}) == {"warps": [2, 4, 8], "unroll": [4, 8, 16]}  # written out: 3 x 3
    exp = parse_spec("name: t\nproblems: [{m: 1, n: 4096, k: 4096}]\ncontracts: [bf16_bf16out_f32acc_tn]\n"
                     "implementations:\n  - gemv: {tune: auto}\n", "t.yaml")
    (tuned,) = exp.implementations
    assert tuned.name == "gemv.tuned[tune=auto]"
    assert len(tuned.candidates) == 9 == len({c.name for c in tuned.candidates})
    assert {(c.config.warps, c.config.unroll) for c in tuned.candidates} == {
        (warps, unroll) for warps in (2, 4, 8) for unroll in (4, 8, 16)}
    assert not [c for c in tuned.candidates if isinstance(c, UnbuildableImplementation)]
    s = tuned.supports(GemmProblem(16, 4096, 4096), C["bf16_bf16out_f32acc_tn"])
    assert not s and "m=16 > 4" in s.reason
