"""Grouped problems on the CPU (docs/grouped.md): routing draws (reproducible, summing to tokens x top_k, each
token's experts distinct), the problem's FLOPs, bytes and label, the spec's mistakes (exit 2 with file:line), the
per-group draw and references, the judge of every group (planted wrong outputs FAIL naming their groups, honest
ones PASS, empty groups judged, masked padding poisoned), the python grouped call, the library rows, the SKIP of
every other family, the store round trip, and the shipped specs."""

from pathlib import Path

import pytest
import torch

from gemmcompare.cli import main
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.grouped import GroupedProblem, default_capacity, label_volume
from gemmcompare.implementations import FIXED, PARAMETRIZED, instantiate
from gemmcompare.implementations.registry import UnbuildableImplementation
from gemmcompare.implementations.user_module import import_module
from gemmcompare.plan import make_plan
from gemmcompare.problems import GemmProblem
from gemmcompare.report.data import problem_sort_key
from gemmcompare.results import Result, Status
from gemmcompare.routing import Routing
from gemmcompare.runner.executor import estimate_bytes
from gemmcompare.runner.inputs import make_draw
from gemmcompare.runner.rows import row_problem
from gemmcompare.spec import load_spec, parse_spec
from gemmcompare.store import Store

ROOT = Path(__file__).resolve().parents[1]
BYO = ROOT / "experiments" / "byo_kernel"
F32OUT, BF16OUT = BUILTIN_CONTRACTS["bf16_f32acc_tn"], BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"]
MS = (20, 0, 5, 40, 12, 1)  # an empty group, groups below 16 tokens, and one of a single row
STACKED = GroupedProblem(24, 40, MS)
MASKED = GroupedProblem(24, 40, MS, "masked", 48)
SETTINGS = corr.CorrectnessSettings()


def _cpu_grouped_mm_leaks_padding_nan() -> bool:
    """Whether this torch's CPU torch._grouped_mm (the 3-D form, BF16) carries a NaN of a padding row into the valid
    row before it. torch 2.11 does on a CPU with AMX (seen 2026-12-07: groups 0, 2, 4, 5 of MASKED lose their last
    row; padding of finite values leaves every valid row exact); torch 2.14 does not. The masked layout's NaN poison
    then FAILs those rows, as the correctness contract must: a masked kernel's padding is whatever memory holds."""
    if not hasattr(torch, "_grouped_mm"):
        return False
    a = torch.ones(len(MS), 48, 40, dtype=torch.bfloat16)
    for g, m in enumerate(MS):
        a[g, m:] = float("nan")
    out = torch._grouped_mm(a, torch.ones(len(MS), 40, 24, dtype=torch.bfloat16), out_dtype=torch.bfloat16)
    return any(bool(torch.isnan(out[g, :m]).any()) for g, m in enumerate(MS))


CPU_GROUPED_MM_LEAKS_NAN = _cpu_grouped_mm_leaks_padding_nan()


def _assert_torch_masked(check, p) -> None:
    """A row of torch's CPU grouped GEMM: PASS, or, on the masked layout of a torch that leaks padding NaN into
    valid rows, FAIL naming them (the harness catching the bug is the test then)."""
    if p.layout == "masked" and CPU_GROUPED_MM_LEAKS_NAN:
        assert not check.passed and "NaN poison survived" in check.message, check.message
    else:
        assert check.passed, check.message


def _judge(out, draw, p, contract=F32OUT, fixture="uniform"):
    return corr.check_output(out, draw.refs, contract, SETTINGS, p.k, fixture, draw.seed)


def _honest(draw, p, dtype=torch.float32):
    """Each group's exact product (FP64, cast): C laid out as the problem's layout lays it out."""
    a, b = draw.operands.a, draw.operands.b
    out = torch.full(tuple(draw.refs.rounded.shape), float("nan"), dtype=dtype)
    for g, m in enumerate(p.ms):
        if p.layout == "masked":
            out[g, :m] = (a[g, :m].double() @ b[g].double()).to(dtype)
        else:
            lo, hi = p.offsets[g], p.offsets[g + 1]
            out[lo:hi] = (a[lo:hi].double() @ b[g].double()).to(dtype)
    return out


# -- routing draws ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution, exponent", [("balanced", 0.0), ("zipf", 1.2), ("zipf", 3.0)])
def test_a_routing_draw_is_reproducible_and_sums_to_tokens_times_top_k(distribution, exponent):
    r = Routing(3000, 8, 64, distribution, exponent, seed=5)
    ms = r.draw()
    assert len(ms) == 64 and sum(ms) == 3000 * 8
    assert max(ms) <= 3000  # each token picks distinct experts: no expert gets a token twice
    fresh = Routing(3000, 8, 64, distribution, exponent, seed=5)
    assert fresh.draw() == ms  # equal routings, equal counts
    assert Routing(3000, 8, 64, distribution, exponent, seed=6).draw() != ms


def test_routing_edges_and_skew():
    assert Routing(100, 4, 4).draw() == (100, 100, 100, 100)  # top_k == experts: every expert every token
    assert Routing(0, 2, 8).draw() == (0,) * 8  # no tokens: every group empty, still legal
    balanced = Routing(4096, 8, 128).draw()
    skewed = Routing(4096, 8, 128, "zipf", 1.2).draw()
    assert max(skewed) > 3 * max(balanced) and min(skewed) < min(balanced)
    assert Routing(64, 8, 128, "zipf", 1.2, 3).draw().count(0) > 0  # zero-token groups happen
    for bad in (dict(tokens=-1, top_k=1, experts=2), dict(tokens=1, top_k=3, experts=2),
                dict(tokens=1, top_k=1, experts=2, distribution="zipf", exponent=0.0),
                dict(tokens=1, top_k=1, experts=2, distribution="pareto")):
        with pytest.raises(ValueError):
            Routing(**bad)


# -- the problem's numbers -----------------------------------------------------------------------------


def test_flops_are_the_sum_of_the_groups_and_bytes_skip_empty_weights():
    assert STACKED.flops == sum(2 * m * 24 * 40 for m in MS) == 2 * STACKED.m * 24 * 40
    assert MASKED.flops == STACKED.flops  # padding is no work
    busy = sum(1 for m in MS if m)
    assert STACKED.unique_bytes(2, 2, 4) == sum(MS) * 40 * 2 + busy * 24 * 40 * 2 + sum(MS) * 24 * 4
    assert STACKED.offsets == (0, 20, 20, 25, 65, 77, 78) and STACKED.rows == 78 and MASKED.rows == 6 * 48
    assert GroupedProblem.from_dict(MASKED.as_dict()) == MASKED


def test_labels_are_unique_stable_and_sort_by_size():
    r = Routing(4096, 8, 128, "zipf", 1.2, 0)
    routed = GroupedProblem(768, 2048, r.draw(), routing=r)
    assert routed.label == "g128 n768 k2048 t4096 top8 zipf1.2 s0"
    assert GroupedProblem(768, 2048, Routing(4096, 8, 128, "zipf", 1.2, 1).draw(),
                          routing=Routing(4096, 8, 128, "zipf", 1.2, 1)).label != routed.label
    assert STACKED.label == "g6 n24 k40 m20,0,5,40,12,1" and MASKED.label == STACKED.label + " masked c48"
    long = GroupedProblem(8, 8, tuple(range(12)))
    assert long.label.startswith("g12 n8 k8 t66 m#") and long.label != GroupedProblem(8, 8, tuple(range(1, 13))).label
    for p in (routed, STACKED, long):
        assert label_volume(p.label) == p.m * p.n * p.k
    assert label_volume("64x64x64") is None
    labels = [routed.label, STACKED.label, "64x64x64"]
    assert sorted(labels, key=problem_sort_key) == [STACKED.label, "64x64x64", routed.label]  # 78*24*40 < 64^3


def test_masked_capacity_defaults_to_the_largest_m_rounded_up_to_128():
    assert default_capacity((5, 130, 0)) == 256 and default_capacity((0, 0)) == 128
    with pytest.raises(ValueError):
        GroupedProblem(8, 8, (5, 200), "masked", 128)


def test_the_memory_estimate_counts_stored_rows_and_every_weight():
    small, big = GroupedProblem(64, 64, (10, 0)), GroupedProblem(64, 64, (10, 0), "masked", 4096)
    assert estimate_bytes(big, F32OUT, 2) > estimate_bytes(small, F32OUT, 2)
    assert estimate_bytes(GroupedProblem(64, 64, (10,) + (0,) * 99), F32OUT, 2) > estimate_bytes(small, F32OUT, 2)


def _held_bytes(draw, n_impls, c_itemsize):
    """What a grouped draw holds on its device (operands, pristine copies, references) and n_impls outputs."""
    tensors = [t for t in draw.operands.tensors() if t is not None] + list(draw.pristine.values())
    tensors += [draw.refs.rounded, draw.refs.original, draw.refs.magnitude]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum(storages.values()) + n_impls * draw.refs.rounded.numel() * c_itemsize


@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_the_memory_estimate_covers_what_a_grouped_draw_holds_plus_one_laid_out_copy(layout):
    ms = (40, 0, 7, 130)
    p = GroupedProblem(96, 160, ms, layout, default_capacity(ms))
    draw = make_draw("uniform", p, BF16OUT, 3, "cpu")
    held = _held_bytes(draw, 4, 2)
    laid_out = draw.operands.b.numel() * 2  # a row that asks for B row-major gets its own copy
    checker_chunks = 8 * 4 * 2048 * p.n  # the check's FP64 row chunks (2048 rows), beside what the draw holds
    assert held + laid_out <= estimate_bytes(p, BF16OUT, 4) - checker_chunks <= 3 * (held + laid_out)


def test_the_deepseek_v3_up_gate_layer_fits_an_80_gb_card():
    """256 experts of 4096 x 7168 BF16 weights (15 GB): drawn group by group, no FP32 copy of every expert's
    weights is held, so the problem is not refused on an H100 (78.4 GiB free; a row is refused above 90%)."""
    free = 78.4 * 2**30
    for tokens in (512, 4096, 16384):
        ms = (tokens * 8 // 256,) * 256  # top 8, balanced
        need = estimate_bytes(GroupedProblem(4096, 7168, ms), BF16OUT, 6)
        assert need < 0.9 * free, (tokens, need / 2**30)
    assert estimate_bytes(GroupedProblem(4096, 7168, (16,) * 256), BF16OUT, 6) > 3 * 2 * 256 * 4096 * 7168


# -- the spec ----------------------------------------------------------------------------------------------

SPEC = """\
name: t
problems:
  - PROBLEM
contracts: [CONTRACTS]
implementations: [library.torch_grouped_mm, library.cublas_loop]
"""


@pytest.mark.parametrize("problem, words", [
    ("grouped: {n: 8, k: 8, m: [4, -3, 2]}", "a group's M must be an integer >= 0"),
    ("grouped: {n: 8, k: 8, m: []}", "m must be a non-empty list"),
    ("grouped: {n: 8, k: 8, groups: 4, m: [1, 2, 3]}", "groups is 4 but m lists 3 group Ms"),
    ("grouped: {n: 8, k: 8, m: [1], routing: {tokens: 4, top_k: 1, experts: 2}}", "exactly one of them"),
    ("grouped: {n: 8, k: 8, routing: {tokens: 4, top_k: 3, experts: 2}}", "top_k 3 is more than the 2 experts"),
    ("grouped: {n: 8, k: 8, routing: {tokens: -4, top_k: 1, experts: 2}}", "tokens must be an integer >= 0"),
    ("grouped: {n: 8, k: 8, routing: {tokens: 4, top_k: 1, experts: 2, distribution: zipff}}",
     "unknown distribution 'zipff'"),
    ("grouped: {n: 8, k: 8, routing: {tokens: 4, top_k: 1, experts: 2, distribution: {zipf: 0}}}",
     "zipf exponent must be a finite number above 0"),
    ("grouped: {n: 8, k: 8, groups: 3, routing: {tokens: 4, top_k: 1, experts: 2}}", "groups is 3 but the routing"),
    ("grouped: {n: 8, k: 8, routing: {tokens: 4, top_k: 1, experts: 5000}}", "MAX_GROUPS"),
    ("grouped: {n: 8, k: 8, m: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, "
     "25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, "
     "53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, "
     "81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100]}", None),  # 101 groups: fine
    ("grouped: {n: 8, k: 8, m: [3, 200], layout: masked, capacity: 128}", "capacity 128 is below the largest group M"),
    ("grouped: {n: 8, k: 8, m: [3], capacity: 128}", "capacity applies to the masked layout only"),
    ("grouped: {n: 8, k: 8, m: [3], layout: maskd}", "did you mean 'masked'?"),
    ("grouped: {n: 8, m: [3]}", "missing dimension 'k'"),
    ("{grouped: {n: 8, k: 8, m: [3]}, batch: 2}", "unknown key 'batch'"),
])
def test_a_grouped_spec_mistake_is_exit_2_with_its_line(tmp_path, capsys, problem, words):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("PROBLEM", problem).replace("CONTRACTS", "bf16_f32acc_tn"))
    code = main(["validate", str(spec)])
    err = capsys.readouterr().err
    if words is None:
        assert code == 0, err
        return
    assert code == 2 and f"{spec}:3:" in err and words in err, err


def test_an_fp8_contract_with_a_row_that_has_no_grouped_fp8_path_is_exit_2_at_its_entry(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("PROBLEM", "grouped: {n: 128, k: 128, m: [16, 0]}")
                    .replace("CONTRACTS", "bf16_f32acc_tn, e4m3_bf16out_f32acc_tn_rowcol"))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:5:" in err and "library.cublas_loop cannot run the spec's grouped problems under FP8" in err, err
    # a dense spec with the same FP8 contract is not such a mistake: the loop's rows are SKIPs there
    spec.write_text(SPEC.replace("PROBLEM", "{m: 16, n: 16, k: 16}").replace("CONTRACTS", "e4m3_bf16out_f32acc_tn_rowcol"))
    assert main(["validate", str(spec)]) == 0


def test_too_many_routing_draws_in_one_spec_is_exit_2(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("PROBLEM", "grouped: {n: 8, k: 8, routing: {tokens: 200000000, top_k: 1, experts: 1000}}")
                    .replace("CONTRACTS", "bf16_f32acc_tn"))
    assert main(["validate", str(spec)]) == 2
    assert "MAX_ROUTING_DRAWS" in capsys.readouterr().err


def test_a_spec_routing_draw_and_masked_layout_become_the_problem():
    exp = parse_spec(SPEC.replace("PROBLEM", "grouped: {n: 16, k: 32, routing: {tokens: 100, top_k: 2, experts: 8, "
                                             "distribution: {zipf: 1.5}, seed: 7}, layout: masked}")
                     .replace("CONTRACTS", "bf16_f32acc_tn"), "t.yaml")
    p = exp.problems[0].problem
    assert p.routing == Routing(100, 2, 8, "zipf", 1.5, 7) and p.ms == p.routing.draw() and sum(p.ms) == 200
    assert p.layout == "masked" and p.capacity == default_capacity(p.ms)
    assert exp.problems[0].label == "g8 n16 k32 t100 top2 zipf1.5 s7 masked c" + str(p.capacity)


# -- the draw and references -------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["uniform", "exact_integers", "adversarial"])
def test_each_group_is_the_2d_draw_of_its_seed_with_that_draws_references(fixture):
    draw = make_draw(fixture, STACKED, F32OUT, 11, "cpu")
    ops = draw.operands
    assert ops.a.shape == (78, 40) and ops.b.shape == (6, 40, 24) and draw.refs.rounded.shape == (78, 24)
    assert ops.m_offsets.dtype == torch.int32 and ops.m_offsets.tolist() == list(STACKED.offsets)
    assert ops.masked_counts is None
    for g, m in enumerate(MS):
        one = make_draw(fixture, GemmProblem(max(m, 1), 24, 40), F32OUT, corr.batch_seed(11, g), "cpu")
        lo, hi = STACKED.offsets[g], STACKED.offsets[g + 1]
        assert torch.equal(ops.a[lo:hi], one.operands.a[:m]) and torch.equal(ops.b[g], one.operands.b)
        for field in ("rounded", "original", "magnitude"):
            assert torch.equal(getattr(draw.refs, field)[lo:hi], getattr(one.refs, field)[:m])
    stored, ld = ops.stored("b", F32OUT.order_b)
    assert stored.shape == (6, 24, 40) and stored.is_contiguous() and ld == 40  # groups x N x K, K-major


def test_the_masked_draw_pads_each_group_with_nan():
    draw = make_draw("uniform", MASKED, F32OUT, 11, "cpu")
    plain = make_draw("uniform", STACKED, F32OUT, 11, "cpu")
    ops = draw.operands
    assert ops.a.shape == (6, 48, 40) and draw.refs.rounded.shape == (6, 48, 24)
    assert ops.masked_counts.tolist() == list(MS)
    for g, m in enumerate(MS):
        lo, hi = STACKED.offsets[g], STACKED.offsets[g + 1]
        assert torch.equal(ops.a[g, :m], plain.operands.a[lo:hi]) and bool(ops.a[g, m:].float().isnan().all())
        assert torch.equal(draw.refs.rounded[g, :m], plain.refs.rounded[lo:hi])


def test_a_write_into_the_offsets_is_seen_and_undone():
    draw = make_draw("uniform", STACKED, F32OUT, 3, "cpu")
    assert draw.intact()
    draw.operands.m_offsets[2] += 1
    assert not draw.intact()
    draw.restore()
    assert draw.intact()


def test_the_weights_are_compared_bit_for_bit_not_checksummed():
    """An MoE layer's weights (7.5G elements) are read once a check, by intact()'s comparison with the pristine
    copy in storage order, and not summed by the fingerprint besides: a changed weight is still seen."""
    draw = make_draw("uniform", STACKED, F32OUT, 3, "cpu")
    assert not draw.operands.b.is_contiguous()  # the logical groups x K x N view of groups x N x K
    before = draw.fingerprint()
    assert before == []  # nothing here that intact() does not compare
    draw.operands.b[5, 39, 23] += 1  # the last element of the last group's weight
    assert not draw.intact() and not draw.unchanged_since(before)


def test_fp8_scales_are_per_group():
    contract = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_rowcol"]
    draw = make_draw("uniform", STACKED, contract, 3, "cpu")
    assert draw.operands.scale_a.shape == (78, 1) and draw.operands.scale_b.shape == (6, 1, 24)
    tensor = make_draw("uniform", STACKED, BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_tensor"], 3, "cpu")
    assert tensor.operands.scale_a.shape == (6, 1, 1) and tensor.operands.scale_b.shape == (6, 1, 1)
    block = make_draw("uniform", GroupedProblem(256, 384, (130, 0, 7)), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"],
                      3, "cpu")
    assert block.operands.scale_a.shape == (137, 3) and block.operands.scale_b.shape == (3, 3, 2)


# -- the judge ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [STACKED, MASKED], ids=["contiguous", "masked"])
@pytest.mark.parametrize("fixture", ["uniform", "exact_integers"])
def test_an_honest_grouped_output_passes_and_lists_the_empty_group(p, fixture):
    draw = make_draw(fixture, p, F32OUT, 7, "cpu")
    check = _judge(_honest(draw, p), draw, p, fixture=fixture)
    assert check.passed and check.message.startswith("all 6 groups (1 empty)"), check.message


@pytest.mark.parametrize("p", [STACKED, MASKED, GroupedProblem(24, 32, (0, 0, 0))],
                         ids=["contiguous", "masked", "all-empty"])
@pytest.mark.parametrize("fixture", ["uniform", "exact_integers"])
def test_all_groups_judged_at_once_read_as_group_by_group(p, fixture):
    """A passing output is judged in one pass over all groups' rows (group by group, each of up to 256 groups
    costs its own host round trips): its result is field for field the group-by-group one."""
    draw = make_draw(fixture, p, F32OUT, 7, "cpu")
    out = _honest(draw, p)
    if fixture == "uniform" and any(p.ms):
        out[p.offsets[-1] - 1 if p.layout == "contiguous" else (5, p.ms[5] - 1)] *= 1 + 1e-6  # a worst ratio > 0
    at_once = _judge(out, draw, p, fixture=fixture)
    one_by_one = corr._check_group_by_group(out, draw.refs, F32OUT, SETTINGS, p.k, fixture, draw.seed, 2048)
    assert at_once.as_dict() == one_by_one.as_dict()
    assert (corr._check_grouped_at_once(out, draw.refs, F32OUT, SETTINGS, p.k, fixture, draw.seed, 2048)
            is None) == (not any(p.ms))


def test_a_failing_output_is_named_group_by_group(monkeypatch):
    """Any failure (a wrong element, a number in the padding) leaves the one-pass judge for the group-by-group
    one, which names the failing groups in order."""
    calls = []
    real = corr._check_group_by_group
    monkeypatch.setattr(corr, "_check_group_by_group", lambda *a: calls.append(1) or real(*a))
    draw = make_draw("uniform", STACKED, F32OUT, 7, "cpu")
    out = _honest(draw, STACKED)
    assert _judge(out, draw, STACKED).passed and not calls
    out[30, 3] += 1.0
    assert not _judge(out, draw, STACKED).passed and calls == [1]
    masked = make_draw("uniform", MASKED, F32OUT, 7, "cpu")
    out = _honest(masked, MASKED)
    out[1, 0] = 0.0
    assert "group 1 (M=0): 24 padding elements written" in _judge(out, masked, MASKED).message and calls == [1, 1]


WRONG = import_module(str(BYO / "wrong_groups.py"))


@pytest.mark.parametrize("p", [STACKED, MASKED], ids=["contiguous", "masked"])
@pytest.mark.parametrize("name, words", [
    ("skips_small", {"contiguous": "3 of 6 groups fail (group 2, 4, 5)", "masked": "(group 2, 4, 5)"}),
    ("writes_past", {"contiguous": "(group 2, 3, 4, 5)", "masked": "padding elements written"}),
    ("ignores_last", {"contiguous": "1 of 6 groups fail (group 5)", "masked": "1 of 6 groups fail (group 5)"}),
    ("fp16_accumulation", {"contiguous": "1 of 6 groups fail (group 0); group 0 (M=20)",
                           "masked": "1 of 6 groups fail (group 0)"}),
])
def test_planted_wrong_grouped_callables_fail_naming_their_groups(p, name, words):
    draw = make_draw("uniform", p, F32OUT, 7, "cpu")
    out = torch.full(tuple(draw.refs.rounded.shape), float("nan"))
    getattr(WRONG, name)(draw.operands.a, draw.operands.b, out, m_offsets=draw.operands.m_offsets,
                         masked_counts=draw.operands.masked_counts)
    check = _judge(out, draw, p)
    assert not check.passed and words[p.layout] in check.message, check.message


def test_another_groups_rows_and_a_number_in_the_padding_fail():
    draw = make_draw("uniform", STACKED, F32OUT, 7, "cpu")
    out = _honest(draw, STACKED)
    out[65:77] = out[25:37]  # group 4 holds rows of group 3's product
    check = _judge(out, draw, STACKED)
    assert not check.passed and "1 of 6 groups fail (group 4)" in check.message, check.message
    masked = make_draw("uniform", MASKED, F32OUT, 7, "cpu")
    out = _honest(masked, MASKED)
    out[1, 0] = 0.0  # the empty group's padding: nothing may be written there
    check = _judge(out, masked, MASKED)
    assert not check.passed and "group 1 (M=0): 24 padding elements written" in check.message, check.message


def test_a_dense_output_for_a_grouped_problem_fails():
    draw = make_draw("uniform", MASKED, F32OUT, 7, "cpu")
    check = _judge(torch.zeros(78, 24), draw, MASKED)
    assert not check.passed and "expected (6, 48, 24)" in check.message


# -- the python call ---------------------------------------------------------------------------------------

PY_SPEC = """\
name: t
problems:
  - grouped: {n: 24, k: 40, m: [20, 0, 5, 40, 12, 1]LAYOUT}
contracts: [bf16_f32acc_tn]
implementations:
  - python: {callable: "k.py:gmm", contract: bf16_f32acc_tn, grouped: true}
  - python: {name: dense, callable: "k.py:dense", contract: bf16_f32acc_tn}
"""

RECORDS = """\
import torch

seen = []


def gmm(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    seen.append((tuple(a.shape), a.stride(), tuple(b.shape), b.stride(), tuple(c.shape), c.stride(),
                 m_offsets.tolist(), None if masked_counts is None else masked_counts.tolist()))
    o = m_offsets.tolist()
    for g in range(b.shape[0]):
        if masked_counts is None:
            c[o[g]:o[g + 1]] = a[o[g]:o[g + 1]].double() @ b[g].double()
        else:
            m = o[g + 1] - o[g]
            c[g, :m] = a[g, :m].double() @ b[g].double()


def dense(a, b, c, alpha=1.0, beta=0.0):
    c.copy_(a.float() @ b.float())
"""


@pytest.mark.parametrize("layout, shapes", [
    ("", ((78, 40), (40, 1), (6, 40, 24), (960, 1, 40), (78, 24), (24, 1), None)),
    (", layout: masked, capacity: 48", ((6, 48, 40), (1920, 40, 1), (6, 40, 24), (960, 1, 40), (6, 48, 24),
                                        (1152, 24, 1), list(MS))),
])
def test_a_grouped_callable_gets_the_stacked_operands_and_the_offsets(tmp_path, layout, shapes):
    (tmp_path / "k.py").write_text(RECORDS)
    exp = parse_spec(PY_SPEC.replace("LAYOUT", layout), "t.yaml", base_dir=tmp_path)
    p, under = exp.problems[0].problem, exp.contracts[0]
    grouped, dense = exp.implementations
    assert grouped.admits(p, under)
    assert "python entries with grouped: true run them" in dense.admits(p, under).reason
    draw = make_draw("uniform", p, under, 13, "cpu")
    prepared = grouped.prepare(p, under, draw.operands, None)
    prepared.poison()
    prepared.launch()
    a_shape, a_strides, b_shape, b_strides, c_shape, c_strides, counts = shapes
    assert import_module(str(tmp_path / "k.py")).seen[-1] == (a_shape, a_strides, b_shape, b_strides, c_shape,
                                                              c_strides, list(STACKED.offsets), counts)
    check = corr.check_output(prepared.output(), draw.refs, under, SETTINGS, p.k, "uniform", 13)
    assert check.passed, check.message


def test_a_grouped_entry_whose_function_cannot_take_the_offsets_is_a_spec_error(tmp_path):
    (tmp_path / "k.py").write_text("def gmm(a, b, c, alpha=1.0, beta=0.0):\n    pass\n")
    with pytest.raises(Exception) as info:
        parse_spec(PY_SPEC.replace("LAYOUT", "").split("  - python: {name: dense")[0], "t.yaml", base_dir=tmp_path)
    assert "m_offsets=m_offsets, masked_counts=masked_counts" in str(info.value)


# -- the rows ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [STACKED, MASKED], ids=["contiguous", "masked"])
@pytest.mark.parametrize("name", ["library.torch_grouped_mm", "library.cublas_loop"])
def test_the_library_rows_pass_every_group(p, name):
    # BF16 out: torch's CPU kernels write their input dtype (FP32 out runs on the GPU: tests/test_gpu_grouped.py)
    draw = make_draw("uniform", p, BF16OUT, 17, "cpu")
    impl = FIXED[name]()
    assert impl.admits(p, BF16OUT)
    prepared = impl.prepare(p, BF16OUT, draw.operands, None)
    prepared.poison()
    prepared.launch()
    check = _judge(prepared.output(), draw, p, BF16OUT)
    if name == "library.torch_grouped_mm":
        _assert_torch_masked(check, p)
    if check.passed:
        assert check.message.startswith("all 6 groups (1 empty)"), check.message
    else:
        assert name == "library.torch_grouped_mm", check.message
    assert draw.intact()
    if name == "library.cublas_loop":
        assert prepared.notes.startswith("5 torch.mm calls (one per non-empty group of 6)")
    elif p.layout == "masked":
        assert prepared.executed_flops == 2 * 6 * 48 * 24 * 40


def _cpu_scaled_mm_takes_rowwise_scales() -> bool:
    a = torch.ones(16, 16).to(torch.float8_e4m3fn)
    try:
        torch._scaled_mm(a, a.t(), scale_a=torch.ones(16, 1), scale_b=torch.ones(1, 16), out_dtype=torch.bfloat16)
        return True
    except RuntimeError:
        return False


@pytest.mark.parametrize("p", [GroupedProblem(32, 48, MS), GroupedProblem(32, 48, MS, "masked", 48)],
                         ids=["contiguous", "masked"])  # N and K multiples of 16: torch._scaled_mm's rule
@pytest.mark.parametrize("contract", ["e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_rowcol"])
def test_the_fp8_loop_passes_every_group_with_its_own_scales(p, contract):
    """library.cublaslt_fp8_loop on the CPU (torch._scaled_mm runs per-tensor and row/column scales there; block
    scales need the GPU: tests/test_gpu_grouped_fp8.py): one call per non-empty group, every group judged."""
    contract = BUILTIN_CONTRACTS[contract]
    if contract.scaling.value == "rowcol" and not _cpu_scaled_mm_takes_rowwise_scales():
        pytest.skip("this torch's CPU torch._scaled_mm takes per-tensor scales only (row-wise came in a later torch)")
    draw = make_draw("uniform", p, contract, 5, "cpu")
    impl = FIXED["library.cublaslt_fp8_loop"]()
    assert impl.admits(p, contract)
    prepared = impl.prepare(p, contract, draw.operands, None)
    prepared.poison()
    prepared.launch()
    check = _judge(prepared.output(), draw, p, contract)
    assert check.passed and check.message.startswith("all 6 groups (1 empty)"), check.message
    assert prepared.notes.startswith("5 cuBLASLt FP8 calls (one per non-empty group of 6)")
    prepared.poison()  # no launch: every group NaN, and the judge says so
    assert not _judge(prepared.output(), draw, p, contract).passed


def test_the_block_scaled_fp8_loop_pads_each_group_to_a_multiple_of_four_rows():
    """cuBLASLt's block-scaled FP8 GEMM refuses M not a multiple of 4 (measured: experiments/studies/fp8/
    cublaslt_fp8_shape_probe.py): the loop pads such a group's A with zero rows (scales 1) outside timing and keeps
    the first M rows of its C; the dense row SKIPs such an M. Prepared on the CPU (the call itself needs the GPU)."""
    from gemmcompare.implementations.library_fp8 import BLOCK_M_MULTIPLE

    p = GroupedProblem(256, 512, [8, 0, 5, 130, 1])
    contract = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"]
    draw = make_draw("uniform", p, contract, 5, "cpu")
    impl = FIXED["library.cublaslt_fp8_loop"]()
    if not impl.admits(p, contract):
        pytest.skip("this torch has no block-scaled scaled_mm")
    prepared = impl.prepare(p, contract, draw.operands, None)
    assert "3 groups' A padded with zero rows to a multiple of 4" in prepared.notes
    a = draw.operands.a
    for g, a_g, _, sa_g, _, c in prepared.calls:
        m = p.ms[g]
        assert a_g.shape[0] == -(-m // BLOCK_M_MULTIPLE) * BLOCK_M_MULTIPLE and sa_g.shape[0] == a_g.shape[0]
        assert sa_g.stride(0) == 1  # outer-dim-major, as cuBLASLt reads block scales
        assert torch.equal(a_g[:m].view(torch.uint8), a[p.offsets[g]: p.offsets[g + 1]].view(torch.uint8))
        assert not a_g[m:].float().any() and bool((sa_g[m:] == 1).all())
        prepared.outs[g] = torch.full((a_g.shape[0], p.n), float(g), dtype=torch.bfloat16)
    out = prepared.output()
    for g, m in enumerate(p.ms):  # each group's first m rows, nothing of its padding rows
        assert bool((out[p.offsets[g]: p.offsets[g + 1]] == g).all())
    dense = FIXED["library.cublaslt_fp8"]().supports(GemmProblem(5, 256, 512), contract)
    assert "M a multiple of 4" in dense.reason


def test_the_block_scaled_fp8_loop_pads_b_scales_to_four_k_blocks_in_the_form_torch_takes(monkeypatch):
    """Qwen3's down projection has K = 768: 6 k blocks, which cuBLASLt takes only padded to 8. The loop makes both
    forms of each group's B scales (block_scale_b_forms), tries them once in prepare on its first group, and keeps the
    one torch takes for every group. Here a stand-in for torch that takes only the [kb, nb] view of the padded one."""
    p = GroupedProblem(256, 768, [8, 0, 4])
    contract = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"]
    draw = make_draw("uniform", p, contract, 5, "cpu")
    impl = FIXED["library.cublaslt_fp8_loop"]()
    if not impl.admits(p, contract):
        pytest.skip("this torch has no block-scaled scaled_mm")
    seen = []

    def scaled_mm(a, b, sa, ra, sb, rb, **kw):
        seen.append(tuple(sb.shape))
        if sb.shape[0] != 6:
            raise RuntimeError("scale_b must have shape 6 x 2")

    monkeypatch.setattr(torch.nn.functional, "scaled_mm", scaled_mm)
    prepared = impl.prepare(p, contract, draw.operands, None)
    assert seen == [(8, 2), (6, 2)]  # the padded form first, then its view: tried once, on the first group
    for g, _, _, _, sb, _ in prepared.calls:
        assert sb.shape == (6, 2) and sb.stride() == (1, 8)
        assert torch.equal(sb, draw.operands.scale_b[g])


@pytest.mark.parametrize("name, contract, words", [
    ("library.cublaslt_fp8_loop", "bf16_f32acc_tn", "FP8 contracts only"),
    ("library.torch_grouped_mm", "f16_f32acc_tn", "torch._grouped_mm takes bf16 inputs"),
    ("library.torch_grouped_mm", "e4m3_bf16out_f32acc_tn_block", "block scales are not offered"),
    ("library.cublas_loop", "e4m3_bf16out_f32acc_tn_tensor", "a loop of torch.mm has no FP8 path"),
    ("library.cublas_loop", "bf16_f32acc_tt", "grouped problems run under TN contracts"),
    ("library.cublas_loop", "bf16_f32acc_tn_aligned", "grouped problems are stored tight"),
    ("library.triton_grouped", "e4m3_bf16out_f32acc_tn_tensor", "the Triton grouped GEMM here is the f16/bf16 one"),
    ("library.triton_grouped", "f32_strict_tn", "tl.dot rounds FP32 operands to TF32"),
    ("library.cublas", "bf16_f32acc_tn", "it launches one dense GEMM and knows no per-group M offsets"),
    ("library.torch_matmul", "bf16_f32acc_tn", "it launches one dense GEMM"),
    ("library.triton_matmul", "bf16_f32acc_tn", "it launches one dense GEMM"),
    ("library.cublaslt_fp8", "e4m3_bf16out_f32acc_tn_tensor", "it launches one dense GEMM"),
])
def test_rows_that_cannot_run_a_grouped_problem_say_why(name, contract, words):
    s = FIXED[name]().admits(STACKED, BUILTIN_CONTRACTS[contract])
    assert not s and words in s.reason, s


GROUPED_ROWS = {"library.torch_grouped_mm", "library.cublas_loop", "library.triton_grouped", "library.cublas_grouped",
                "library.cublaslt_fp8_loop"}


def test_every_other_family_skips_grouped_problems_saying_why():
    """Every fixed row but the grouped ones, and every parametrized family at its defaults (custom and python
    need a file: tested above and in test_custom; hopper.grouped and hopper.grouped_fp8 run them: test_hopper_family),
    SKIPs with the shared reason."""
    others = [FIXED[name]() for name in sorted(set(FIXED) - GROUPED_ROWS)]
    others += [instantiate(family, {}) for name, family in sorted(PARAMETRIZED.items())
               if name not in ("custom", "python", "hopper.grouped", "hopper.grouped_fp8")]
    assert len(others) > 20
    for impl in others:
        for contract in (F32OUT, BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_tensor"]):
            s = impl.admits(STACKED, contract)
            if isinstance(impl, UnbuildableImplementation):  # cutlass at its defaults names no configuration
                assert not s and s.reason.startswith("invalid configuration:"), (impl.name, s)
                continue
            assert not s and "knows no per-group M offsets" in s.reason, (impl.name, s)
    for name in GROUPED_ROWS:  # and the grouped rows take no dense problem
        assert FIXED[name]().admits(GemmProblem(8, 8, 8), F32OUT).reason.startswith("it runs grouped problems only")


# -- rows, the store, predictions ------------------------------------------------------------------------


def test_a_grouped_row_round_trips_through_the_store(tmp_path):
    r = Routing(100, 2, 8, "zipf", 1.2, 4)
    p = GroupedProblem(16, 32, r.draw(), "masked", 128, r)
    row = Result("r1", p.label, p.m, p.n, p.k, 1, "bf16_f32acc_tn", "library.cublas_loop", "library", {},
                 Status.PASS, flops=p.flops, grouped=p.as_dict())
    assert row_problem(row) == p
    store = Store(tmp_path / "g.db")
    store.create_run({"run_id": "r1", "name": "t", "status": "running", "receipt": {}})
    store.add_result(row)
    back = store.results("r1").iloc[0]
    assert back["problem"] == p.label and back["grouped"] == p.as_dict() and back["flops"] == p.flops
    assert GroupedProblem.from_dict(back["grouped"]) == p
    dense = Result("r1", "8x8x8", 8, 8, 8, 1, "c", "i", "f", {}, Status.PASS)
    assert row_problem(dense) == GemmProblem(8, 8, 8) and dense.to_record()["grouped"] == "{}"


def test_predictions_say_they_do_not_model_grouped_problems():
    from gemmcompare.model.predict import predict_row

    rec = {"m": 78, "n": 24, "k": 40, "batch": 1, "grouped": STACKED.as_dict(), "family": "library", "params": {}}
    with pytest.raises(ValueError, match="no prediction for grouped problems"):
        predict_row(rec, "h200")


# -- the shipped specs and the starter --------------------------------------------------------------------


def test_moe_shapes_loads_and_plans_on_the_cpu():
    exp = load_spec(ROOT / "experiments" / "moe_shapes.yaml")
    plan = make_plan(exp)
    # torch's, Triton's, cuBLAS's, the loop, CUTLASS's and hopper.grouped (both tuned)
    assert len(exp.problems) == 48 and plan.row_count == 48 * 6
    assert all(why.endswith("triton is not installed") for why in plan.skips()), plan.skips()
    labels = [e.label for e in exp.problems]
    assert len(set(labels)) == 48
    assert "g256 n4096 k7168 t16384 top8 zipf1.2 s0" in labels and "g8 n4096 k14336 t64 top2 balanced s0" in labels
    for entry in exp.problems:
        p = entry.problem
        assert sum(p.ms) == p.routing.tokens * p.routing.top_k and p.groups == p.routing.experts


def test_the_grouped_example_plans_its_rows():
    plan = make_plan(load_spec(BYO / "grouped.yaml"))
    runnable = {(c.entry.label, c.contract.name, c.implementation.name) for c in plan.cells if c.support}
    assert ("g8 n256 k512 m64,0,5,130,12,200,1,96", "bf16_f32acc_tn", "python.writes_past") in runnable
    assert ("g4 n256 k512 m64,0,5,130 masked c256", "bf16_bf16out_f32acc_tn", "library.cublas_loop") in runnable


def test_the_grouped_python_starter_runs_on_the_cpu(tmp_path):
    assert main(["new-kernel", "my_g", "--abi", "python", "--grouped", "--dir", str(tmp_path)]) == 0
    exp = load_spec(tmp_path / "my_g.yaml")
    assert [i.name for i in exp.implementations] == ["library.torch_grouped_mm", "library.cublas_loop", "python.my_g"]
    assert all(e.problem.is_grouped for e in exp.problems) and not make_plan(exp).skips()
    fn = import_module(str(tmp_path / "my_g.py")).my_g
    for p in (STACKED, MASKED):  # BF16 out on the CPU (torch's CPU grouped GEMM writes its input dtype)
        draw = make_draw("uniform", p, BF16OUT, 5, "cpu")
        out = torch.full(tuple(draw.refs.rounded.shape), float("nan"), dtype=torch.bfloat16)
        fn(draw.operands.a, draw.operands.stored("b", BF16OUT.order_b)[0].transpose(-2, -1), out,
           m_offsets=draw.operands.m_offsets, masked_counts=draw.operands.masked_counts)
        _assert_torch_masked(_judge(out, draw, p, BF16OUT), p)  # the starter calls torch._grouped_mm
    assert main(["new-kernel", "my_h", "--grouped", "--dir", str(tmp_path)]) == 2


# -- a whole run (tests/fake_device.py stands in for the GPU), its store and its report --------------------


def test_a_grouped_run_stores_its_rows_and_reports_them(tmp_path, monkeypatch):
    """The plan, the measuring worker (the experiment pickled to it), the rows, the store and `report`, with the
    fake GPU's executor: every grouped cell once, each row carrying its problem, the report's table naming the
    grouped labels (the work is the groups', the baseline's ratio inside the group)."""
    from fake_device import BACKEND, DEVICE, GPUS, fake_builds
    from gemmcompare.runner import parent
    from gemmcompare.runner.parent import Runner, RunOptions

    exp = load_spec(BYO / "grouped.yaml")
    monkeypatch.setattr(parent, "build_for", lambda exp, device, o: fake_builds(exp))
    options = RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, backend=BACKEND,
                         silence_margin_s=2.0)
    out = Runner(exp, options, device=DEVICE, gpus=GPUS[:1]).run()
    assert out.status == "complete"
    assert sorted((r.problem, r.contract, r.implementation) for r in out.rows) == sorted(c.key for c in make_plan(exp).cells)
    stored = Store(tmp_path / "g.db").results(out.run_id)
    for entry in exp.problems:
        p = entry.problem
        rows = stored[stored["problem"] == p.label]
        assert len(rows) == 18 and all(GroupedProblem.from_dict(g) == p for g in rows["grouped"])  # 9 rows x 2 contracts
        assert set(rows["flops"]) == {p.flops} and set(rows["m"]) == {sum(p.ms)}
    report = tmp_path / "report"
    assert main(["report", str(tmp_path / "runs" / out.run_id), "--out", str(report),
                 "--plots", "percent_of_baseline"]) == 0
    text = (report / "report.md").read_text()
    assert all(entry.label in text for entry in exp.problems)


FP8_RECORDS = """\
seen = []


def gmm(a, b, c, alpha=1.0, beta=0.0, scale_a=None, scale_b=None, m_offsets=None, masked_counts=None):
    seen.append((tuple(scale_a.shape), tuple(scale_b.shape)))
    o = m_offsets.tolist()
    for g in range(b.shape[0]):
        rows = slice(o[g], o[g + 1])
        sa = scale_a[g] if scale_a.shape[0] == b.shape[0] and scale_a.dim() == 3 else scale_a[rows]
        c[rows] = ((a[rows].double() * sa.double()) @ (b[g].double() * scale_b[g].double())).to(c.dtype)
"""


@pytest.mark.parametrize("scaling, shapes", [("tensor", ((6, 1, 1), (6, 1, 1))), ("rowcol", ((78, 1), (6, 1, 24)))])
def test_a_grouped_fp8_callable_gets_per_group_scales_and_passes(tmp_path, scaling, shapes):
    (tmp_path / "k.py").write_text(FP8_RECORDS)
    contract = f"e4m3_bf16out_f32acc_tn_{scaling}"
    exp = parse_spec(f"name: t\nproblems:\n  - grouped: {{n: 24, k: 40, m: [20, 0, 5, 40, 12, 1]}}\ncontracts: [{contract}]\n"
                     f"implementations:\n  - python: {{callable: \"k.py:gmm\", contract: {contract}, scalings: [{scaling}], "
                     f"grouped: true}}\n", "t.yaml", base_dir=tmp_path)
    p, under, impl = exp.problems[0].problem, exp.contracts[0], exp.implementations[0]
    assert impl.admits(p, under)
    draw = make_draw("uniform", p, under, 21, "cpu")
    prepared = impl.prepare(p, under, draw.operands, None)
    prepared.poison()
    prepared.launch()
    assert import_module(str(tmp_path / "k.py")).seen[-1] == shapes
    check = corr.check_output(prepared.output(), draw.refs, under, SETTINGS, p.k, "uniform", 21)
    assert check.passed and check.message.startswith("all 6 groups (1 empty)"), check.message


INTERPRETED_GROUPED = """\
import torch
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.grouped import GroupedProblem
from gemmcompare.implementations import FIXED
from gemmcompare.implementations import triton_grouped_kernels as tgk
from gemmcompare.runner.inputs import make_draw

class Fixed:  # the autotuner benchmarks on a GPU: a 16x16x16 tile stands in for its choice
    best_config = tgk._config(16, 16, 16, 1, 1)
    def __getitem__(self, grid):
        return lambda *args, **kw: tgk.grouped_matmul_kernel[grid](*args, **kw, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)

tgk.grouped_autotuned = Fixed()
contract = BUILTIN_CONTRACTS["f16_f32acc_tn"]  # f16: the interpreter's dot mishandles bf16
ms = (20, 0, 5, 40, 12, 1, 0, 33)  # empty groups, a single row, M past one tile; 4 programs walk 3x2 tiles each
for p in (GroupedProblem(24, 40, ms), GroupedProblem(24, 40, ms, "masked", 48), GroupedProblem(17, 9, (0, 0))):
    draw = make_draw("uniform", p, contract, 17, "cpu")
    prepared = FIXED["library.triton_grouped"]().prepare(p, contract, draw.operands, None)
    prepared.poison()
    prepared.launch()
    check = corr.check_output(prepared.output(), draw.refs, contract, corr.CorrectnessSettings(), p.k, "uniform", 17)
    assert check.passed, (p.layout, check.message)
    assert "16x16" not in prepared.notes and "at most 4 programs" in prepared.notes, prepared.notes
    assert draw.intact()
    print(p.layout, check.message)

# alpha and beta, straight through the kernel: C_g = 2 A_g B_g + 0.5 C0_g on every group's rows, nothing else
torch.manual_seed(0)
ms, n, k = [3, 0, 18], 20, 35
a, b = torch.randn(sum(ms), k).half(), torch.randn(len(ms), n, k).half()
offs = torch.tensor([0, 3, 3, 21], dtype=torch.int32)
c0 = torch.randn(sum(ms), n)
c = c0.clone()
tgk.launch(a, b.transpose(1, 2), c, offs[:-1].contiguous(), (offs[1:] - offs[:-1]).contiguous(), ms, 2.0, 0.5, 2,
           kernel=tgk.grouped_matmul_kernel, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
for g in range(3):
    lo, hi = offs[g].item(), offs[g + 1].item()
    want = 2.0 * (a[lo:hi].double() @ b[g].double().t()) + 0.5 * c0[lo:hi].double()
    assert torch.allclose(c[lo:hi].double(), want, atol=1e-3, rtol=0), g
print("grouped kernel ok")
"""


def test_the_triton_grouped_gemm_under_the_interpreter(tmp_path):
    """library.triton_grouped's kernel and its prepare on the CPU (TRITON_INTERPRET=1): both layouts, empty groups,
    a problem with every group empty, programs that walk several tiles, alpha and beta; judged per group."""
    pytest.importorskip("triton")
    import os
    import subprocess
    import sys

    script = tmp_path / "interp.py"
    script.write_text(INTERPRETED_GROUPED)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "grouped kernel ok" in out.stdout
    assert "contiguous all 8 groups (2 empty)" in out.stdout and "masked all 8 groups (2 empty)" in out.stdout, out.stdout
