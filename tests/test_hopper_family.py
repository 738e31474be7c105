"""The hopper family on the CPU: names, the kernels' rules as SKIP reasons, any K under either storage policy,
rendering, and what hopper.grouped admits."""

import pytest

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order
from gemmcompare.contracts.storage import Storage, plan_operands
from gemmcompare.grouped import GroupedProblem
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.hopper import STEPS, HopperConfig
from gemmcompare.implementations.registry import UnbuildableImplementation
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import SpecError, parse_spec


@pytest.mark.parametrize("step", sorted(STEPS))
def test_every_default_is_valid_and_renders_its_own_entry(step):
    impl = instantiate(PARAMETRIZED[f"hopper.{step}"], {})
    assert not isinstance(impl, UnbuildableImplementation), getattr(impl, "reason", "")
    (src,) = impl.sources()
    assert f'#include "hopper/{step}.cuh"' in src.text
    assert f'extern "C" int {impl.entry_symbol}(' in src.text
    assert f"gc::hopper::{step}::run<" in src.text
    assert impl.kernel_filter == f"{impl.entry_symbol}_tag" and impl.kernel_filter in src.text
    assert impl.arch_specific and impl.required_arch() == "sm_90a"
    assert impl.name.startswith(f"hopper.{step}[block=")


def test_default_shared_memory_matches_the_kernels_readme():
    # extensions/hopper/README.md: 33,808 B (wgmma_tma), 99,376 (pipelined), 197,696 (steps 3-5), 230,464 (best)
    expected = {"wgmma_tma": 33808, "pipelined": 99376, "warp_specialized": 197696, "persistent": 197696,
                "cluster": 197696, "best": 230464}
    for step, nbytes in expected.items():
        assert instantiate(PARAMETRIZED[f"hopper.{step}"], {}).dynamic_smem_bytes() == nbytes


@pytest.mark.parametrize("step, params, reason", [
    ("wgmma_tma", {"stages": 2}, "stages=2: hopper.wgmma_tma takes 1"),
    ("pipelined", {"consumers": 2}, "consumers=2: hopper.pipelined takes [1]"),
    ("persistent", {"cluster_m": 2}, "cluster_m=2: hopper.persistent takes [1]"),
    ("best", {"block": [128, 96, 64]}, "BN=96 must be a wgmma N"),
    ("best", {"block": [128, 256, 32]}, "BK=32 must be 64, 128, 192 or 256"),
    ("warp_specialized", {"consumers": 1}, "256 f32 accumulators per consumer thread"),
    ("best", {"stages": 5}, "need 279,632 bytes of shared memory"),
    ("cluster", {"cluster_m": 3}, "cluster_m=3: hopper.cluster takes [1, 2, 4]"),
])
def test_impossible_configurations_are_skip_rows_with_the_reason(step, params, reason):
    impl = instantiate(PARAMETRIZED[f"hopper.{step}"], params)
    assert isinstance(impl, UnbuildableImplementation)
    assert reason in impl.reason
    support = impl.supports(GemmProblem(256, 256, 256), BUILTIN_CONTRACTS["f16_f32acc_tn"])
    assert not support and reason in support.reason


@pytest.mark.parametrize("k", [1, 33, 617, 1025])
@pytest.mark.parametrize("step", sorted(s for s, rules in STEPS.items() if not rules.fp8 and not rules.grouped))
def test_any_k_runs_under_both_policies_in_place_or_through_timed_copies(step, k):
    """TMA needs 16-byte rows of A and B, not K % 8 == 0: aligned buffers serve in place, tight ones are copied."""
    impl = instantiate(PARAMETRIZED[f"hopper.{step}"], {})
    c = BUILTIN_CONTRACTS
    for name in ("f16_f32acc_tn", "f16_f32acc_tn_aligned", "bf16_bf16out_f32acc_tn", "bf16_bf16out_f32acc_tn_aligned"):
        assert impl.supports(GemmProblem(611, 613, k), c[name]), (name, impl.supports(GemmProblem(611, 613, k), c[name]))
    orders, sizes = (Order.ROW, Order.COL, Order.ROW), (2, 2, 4)
    tight = plan_operands(611, 613, k, (611, 613, k), orders, sizes, Storage.TIGHT, impl.constraints.ld_multiples)
    aligned = plan_operands(611, 613, k, (611, 613, k), orders, sizes, Storage.ALIGNED, impl.constraints.ld_multiples)
    assert [tight[w].copy for w in "abc"] == [k % 8 != 0, k % 8 != 0, False]
    assert not any(aligned[w].copy for w in "abc")
    assert tight["a"].kernel.ld % 8 == 0 and tight["b"].kernel.ld % 8 == 0


@pytest.mark.parametrize("k", [1, 33, 617, 1025])
def test_fp8_runs_any_k_with_16_byte_rows_of_one_byte_elements(k):
    """hopper.fp8's TMA rows are 16 bytes = 16 FP8 elements: tight storage copies A and B when K % 16 != 0,
    aligned storage serves in place. It takes every scale shape; block scales only with BN <= 128 (a tile in
    one column block of scales); the 16-bit contracts are SKIPs."""
    impl = instantiate(PARAMETRIZED["hopper.fp8"], {})
    c = BUILTIN_CONTRACTS
    for name in ("e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_aligned",
                 "e4m3_bf16out_f32acc_tn_tensor_fastacc", "e5m2_f32out_f32acc_tn_tensor",
                 "e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_block", "e4m3_f32out_f32acc_tn_block"):
        assert impl.supports(GemmProblem(611, 613, k), c[name]), (name, impl.supports(GemmProblem(611, 613, k), c[name]))
    support = impl.supports(GemmProblem(611, 613, k), c["f16_f32acc_tn"])
    assert not support and "takes e4m3/e5m2" in support.reason
    wide = instantiate(PARAMETRIZED["hopper.fp8"], {"block": [128, 192, 128], "stages": 4})
    assert wide.supports(GemmProblem(611, 613, k), c["e4m3_bf16out_f32acc_tn_rowcol"])
    support = wide.supports(GemmProblem(611, 613, k), c["e4m3_bf16out_f32acc_tn_block"])
    assert not support and "BN <= 128" in support.reason
    overlapped = instantiate(PARAMETRIZED["hopper.fp8"], {"overlap": 1})  # block scales too (loaded a stage ahead)
    for name in ("e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_block"):
        assert overlapped.supports(GemmProblem(611, 613, k), c[name]), name
    orders, sizes = (Order.ROW, Order.COL, Order.ROW), (1, 1, 2)
    tight = plan_operands(611, 613, k, (611, 613, k), orders, sizes, Storage.TIGHT, impl.constraints.ld_multiples)
    aligned = plan_operands(611, 613, k, (611, 613, k), orders, sizes, Storage.ALIGNED, impl.constraints.ld_multiples)
    assert [tight[w].copy for w in "abc"] == [k % 16 != 0, k % 16 != 0, False]
    assert not any(aligned[w].copy for w in "abc")


@pytest.mark.parametrize("params, reason", [
    ({"block": [128, 128, 64]}, "BK is 128"),
    ({"block": [128, 256, 128], "stages": 4}, "promotion registers"),
])
def test_fp8_configurations_it_cannot_build_are_skip_rows_with_the_reason(params, reason):
    impl = instantiate(PARAMETRIZED["hopper.fp8"], params)
    assert isinstance(impl, UnbuildableImplementation) and reason in impl.reason


def test_the_contracts_it_runs():
    impl = instantiate(PARAMETRIZED["hopper.best"], {})
    c = BUILTIN_CONTRACTS
    for name in ("f16_f32acc_tn", "f16_f16out_f32acc_tn", "bf16_bf16out_f32acc_tn", "bf16_f32acc_tn"):
        assert impl.supports(GemmProblem(611, 613, 617), c[name]), name
    for name in ("f16_f32acc_tt", "f32_strict_tn", "f16_f16acc_tn"):  # B row-major, FP32 in, FP16 accumulate
        assert not impl.supports(GemmProblem(64, 64, 64), c[name]), name


def test_a_spec_sweeps_hopper_parameters():
    exp = parse_spec("name: h\nproblems: [{m: 64, n: 64, k: 64}]\ncontracts: [f16_f32acc_tn]\n"
                     "implementations:\n  - hopper.best: {stages: [3, 4], cluster_m: [1, 2]}\n")
    assert len(exp.implementations) == 4
    assert {i.config.ident for i in exp.implementations} == {
        f"best_128x256x64_s{s}_c2_cm{cm}_g8" for s in (3, 4) for cm in (1, 2)}
    assert HopperConfig("best", (128, 256, 64), 4, 2, 2, 8).symbol() == "gc_hopper_best_128x256x64_s4_c2_cm2_g8"


# -- hopper.grouped: grouped problems only ---------------------------------------------------------------------


def test_grouped_admits_grouped_problems_and_skips_dense_ones_with_the_reason():
    impl = instantiate(PARAMETRIZED["hopper.grouped"], {})
    c = BUILTIN_CONTRACTS
    listed = GroupedProblem(256, 512, (64, 0, 5, 130, 12, 200, 1, 96))
    for name in ("bf16_f32acc_tn", "bf16_bf16out_f32acc_tn", "f16_f32acc_tn", "f16_f16out_f32acc_tn"):
        assert impl.admits(listed, c[name]), (name, impl.admits(listed, c[name]))
    assert impl.admits(GroupedProblem(4096, 7168, (0,) * 255 + (3,)), c["bf16_bf16out_f32acc_tn"])
    assert impl.admits(GroupedProblem(768, 2048, (0, 0)), c["bf16_f32acc_tn"])  # every group empty: nothing to do
    dense = impl.admits(GemmProblem(256, 256, 256), c["bf16_f32acc_tn"])
    assert not dense and "grouped problems only" in dense.reason and "hopper.persistent" in dense.reason
    masked = impl.admits(GroupedProblem(256, 512, (64, 0, 5), layout="masked", capacity=128), c["bf16_f32acc_tn"])
    assert not masked and "contiguous layout" in masked.reason
    odd_k = impl.admits(GroupedProblem(256, 100, (64, 0, 5)), c["bf16_f32acc_tn"])
    assert not odd_k and "k=100 is not a multiple of 8" in odd_k.reason
    fp8 = impl.admits(listed, c["e4m3_bf16out_f32acc_tn_tensor"])
    assert not fp8 and "e4m3" not in impl.contract_support.summary()
    tt = impl.admits(listed, c["f16_f32acc_tt"])
    assert not tt and "TN contracts" in tt.reason
    # the other steps launch one dense GEMM
    persistent = instantiate(PARAMETRIZED["hopper.persistent"], {}).admits(listed, c["bf16_f32acc_tn"])
    assert not persistent and "knows no per-group M offsets" in persistent.reason


@pytest.mark.parametrize("params, reason", [
    ({"cluster_m": 2}, "cluster_m=2: hopper.grouped takes [1]"),
    ({"consumers": 1}, "256 f32 accumulators per consumer thread"),
    ({"block": [64, 256, 64]}, "BM=64 must be a multiple of 128"),
    ({"stages": 5}, "need 279,632 bytes of shared memory"),  # 5 stages of 48 KB and the epilogue buffers
    ({"stages": 1}, "stages=1: hopper.grouped takes 2..8"),
    ({"block": [128, 96, 64]}, "BN=96 must be a wgmma N"),
])
def test_grouped_configurations_it_cannot_build_are_skip_rows_with_the_reason(params, reason):
    impl = instantiate(PARAMETRIZED["hopper.grouped"], params)
    assert isinstance(impl, UnbuildableImplementation) and reason in impl.reason
    support = impl.supports(GroupedProblem(256, 512, (64, 0, 5)), BUILTIN_CONTRACTS["bf16_f32acc_tn"])
    assert not support and reason in support.reason


def test_grouped_renders_its_step_and_tunes_over_the_tiles_it_can_build():
    impl = instantiate(PARAMETRIZED["hopper.grouped"], {"block": [64, 256, 64], "consumers": 1})
    (src,) = impl.sources()
    assert "gc::hopper::Config<64, 256, 64, 4, 1, 1, 8>" in src.text and "gc::hopper::grouped::run<" in src.text
    # the stages, one consumer's two 8 KB epilogue buffers (TMA stores of whole tiles), the barriers, the slack
    assert impl.takes_grouped and impl.dynamic_smem_bytes() == 4 * (64 + 256) * 64 * 2 + 2 * 8192 + 16 * 4 + 1024
    exp = parse_spec("name: h\nproblems:\n  - grouped: {n: 256, k: 512, m: [64, 0, 5]}\n  - {m: 64, n: 64, k: 64}\n"
                     "contracts: [bf16_f32acc_tn]\nimplementations:\n  - hopper.grouped: {tune: auto}\n")
    (tuned,) = exp.implementations
    buildable = [c for c in tuned.candidates if not isinstance(c, UnbuildableImplementation)]
    assert len(tuned.candidates) == 8 and len(buildable) == 5
    grouped, dense = (e.problem for e in exp.problems)
    assert tuned.admits(grouped, BUILTIN_CONTRACTS["bf16_f32acc_tn"])
    assert not tuned.admits(dense, BUILTIN_CONTRACTS["bf16_f32acc_tn"])


# -- hopper.stream_k: data-parallel + stream-K schedule ----------------------------------------------------------


def test_stream_k_renders_its_schedule_and_a_workspace_entry():
    impl = instantiate(PARAMETRIZED["hopper.stream_k"], {})
    assert impl.name == "hopper.stream_k[block=128x256x64,cluster_m=1,consumers=2,group=8,schedule=auto,stages=4]"
    assert impl.has_workspace and impl.dynamic_smem_bytes() == 230464  # best's stages and epilogue buffers
    (src,) = impl.sources()
    sym = impl.entry_symbol
    assert sym == "gc_hopper_stream_k_128x256x64_s4_c2_cm1_g8_auto"
    assert f"gc::hopper::stream_k::run<{sym}_config, {sym}_tag, gc::hopper::stream_k::AUTO>" in src.text
    assert f"workspace_bytes<{sym}_config, {sym}_tag, gc::hopper::stream_k::AUTO>" in src.text
    assert "Config<128, 256, 64, 4, 2, 1, 8>;" in src.text  # no SPLITS: the schedule is run<>'s MODE
    for schedule, mode in (("hybrid", "HYBRID"), ("stream_k", "STREAM_K"), ("data_parallel", "DATA_PARALLEL")):
        other = instantiate(PARAMETRIZED["hopper.stream_k"], {"schedule": schedule})
        assert other.entry_symbol.endswith(f"_{schedule}") and f"stream_k::{mode}>" in other.sources()[0].text
    # the other steps keep their names and take no schedule
    assert "schedule" not in instantiate(PARAMETRIZED["hopper.best"], {}).name


@pytest.mark.parametrize("step, params, reason", [
    ("stream_k", {"cluster_m": 2}, "cluster_m=2: hopper.stream_k takes [1]"),
    ("stream_k", {"schedule": "split"}, "schedule='split': hopper.stream_k takes auto | data_parallel | hybrid"),
    ("stream_k", {"stages": 5}, "need 279,632 bytes of shared memory"),
    ("stream_k", {"block": [128, 256, 64], "consumers": 1}, "256 f32 accumulators per consumer thread"),
])
def test_stream_k_configurations_it_cannot_build_are_skip_rows(step, params, reason):
    impl = instantiate(PARAMETRIZED[f"hopper.{step}"], params)
    assert isinstance(impl, UnbuildableImplementation) and reason in impl.reason, getattr(impl, "reason", "")


def test_stream_k_is_tuned_over_best_s_grid_and_listed_in_the_llm_shapes_study():
    from pathlib import Path

    from gemmcompare.tuning.tuned import FAMILY_GRIDS

    assert FAMILY_GRIDS["hopper.stream_k"] == FAMILY_GRIDS["hopper.best"]
    study = Path(__file__).resolve().parents[1] / "experiments" / "llm_shapes.yaml"
    spec = parse_spec(study.read_text(), "llm_shapes.yaml")
    tuned = [i for i in spec.implementations if i.name.startswith("hopper.stream_k.tuned")]
    assert len(tuned) == 1 and "hopper.best.tuned[tune=auto]" in [i.name for i in spec.implementations]
    built = [c for c in tuned[0].candidates if not isinstance(c, UnbuildableImplementation)]
    assert len(built) == 5 and all(c.config.schedule == "auto" for c in built)


# -- hopper.grouped_fp8: grouped problems with FP8 inputs and block scales -----------------------------------------


def test_grouped_fp8_runs_block_scaled_grouped_problems_and_says_why_not_the_rest():
    impl = instantiate(PARAMETRIZED["hopper.grouped_fp8"], {})
    c = BUILTIN_CONTRACTS
    assert impl.name == "hopper.grouped_fp8[block=128x128x128,cluster_m=1,consumers=2,group=8,overlap=0,stages=6]"
    assert impl.takes_grouped and impl.grouped_fp8  # a grouped FP8 spec may name it (spec/load.py)
    assert not instantiate(PARAMETRIZED["hopper.grouped"], {}).grouped_fp8
    # six stages of 128 x 128 FP8 bytes for A and for B, a barrier pair per stage, the alignment slack
    assert impl.dynamic_smem_bytes() == 6 * (128 + 128) * 128 + 2 * 2 * 8192 + 16 * 6 + 1024  # + the TMA-store buffers
    layer = GroupedProblem(4096, 7168, (0,) * 250 + (3, 17, 64, 130, 0, 500))
    for name in ("e4m3_bf16out_f32acc_tn_block", "e4m3_f32out_f32acc_tn_block"):
        assert impl.admits(layer, c[name]), (name, impl.admits(layer, c[name]))
    tensor = impl.admits(layer, c["e4m3_bf16out_f32acc_tn_tensor"])
    assert not tensor and "the only grouped scaling gemm_abi.h defines" in tensor.reason
    bf16 = impl.admits(layer, c["bf16_bf16out_f32acc_tn"])
    assert not bf16 and "e4m3" in impl.contract_support.summary()
    dense = impl.admits(GemmProblem(256, 256, 256), c["e4m3_bf16out_f32acc_tn_block"])
    assert not dense and "grouped problems only" in dense.reason
    odd_k = impl.admits(GroupedProblem(256, 520, (64, 5)), c["e4m3_bf16out_f32acc_tn_block"])  # 520 = 8 x 65
    assert not odd_k and "k=520 is not a multiple of 16" in odd_k.reason
    (src,) = impl.sources()
    assert '#include "hopper/grouped_fp8.cuh"' in src.text and "gc::hopper::grouped_fp8::run<" in src.text


@pytest.mark.parametrize("params, reason", [
    ({"block": [128, 192, 128], "stages": 4}, "BN=192"),  # fits the registers, not whole 128-wide scale blocks
    ({"block": [128, 256, 128], "stages": 4, "overlap": 1}, "overlap=1"),  # two partial sets beside 64 x 256 sums
    ({"accumulation": "fast"}, "accumulation=fast"),
    ({"block": [128, 128, 128], "overlap": 1, "consumers": 1}, "promotion registers"),
    ({"block": [128, 128, 64]}, "BK is 128"),
    ({"consumers": 1}, "promotion registers"),  # 128 rows on one consumer: 2 x 128 sums and partials per thread
])
def test_grouped_fp8_configurations_it_cannot_build_are_skip_rows_with_the_reason(params, reason):
    impl = instantiate(PARAMETRIZED["hopper.grouped_fp8"], params)
    assert isinstance(impl, UnbuildableImplementation) and reason in impl.reason, impl


def test_a_grouped_fp8_spec_names_the_hand_written_step_and_tunes_its_tiles():
    spec = ("name: g\nproblems:\n  - grouped: {n: 256, k: 512, m: [64, 0, 5]}\ncontracts: [e4m3_bf16out_f32acc_tn_block]\n"
            "implementations:\n  - IMPL\n")
    exp = parse_spec(spec.replace("IMPL", "hopper.grouped_fp8: {tune: auto}"))
    (tuned,) = exp.implementations
    buildable = [c for c in tuned.candidates if not isinstance(c, UnbuildableImplementation)]
    assert len(tuned.candidates) == 24 and len(buildable) == 9
    assert {c.config.block for c in buildable} == {(128, 128, 128), (64, 128, 128), (128, 256, 128)}
    assert {c.config.overlap for c in buildable} == {0, 1}
    # the 256-column tile: two consumers, 4 stages (48 KB each and the epilogue's 32 KB), promoted per half, no overlap
    (wide,) = [c.config for c in buildable if c.config.block[1] == 256]
    assert (wide.consumers, wide.stages, wide.overlap) == (2, 4, 0)
    with pytest.raises(SpecError, match="hopper.grouped takes f16/bf16 inputs"):
        parse_spec(spec.replace("IMPL", "hopper.grouped"))


def test_a_grouped_point_that_cannot_be_built_says_why_on_a_grouped_problem():
    """hopper.grouped's tune grid holds 128x256 with one consumer (256 f32 sums a thread: it would spill). On a grouped
    problem the tuned row's `excluded` must say that, not the dense families' "launches one dense GEMM"."""
    impl = instantiate(PARAMETRIZED["hopper.grouped"], {"block": (128, 256, 64), "consumers": 1})
    s = impl.check(GroupedProblem(4096, 7168, (512, 0, 64)), BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"], None)
    assert not s and s.reason.startswith("invalid configuration:") and "accumulators" in s.reason
