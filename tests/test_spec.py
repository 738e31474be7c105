"""Spec validation and expansion (CPU)."""

from pathlib import Path

from experiment_scripts import committed_specs

import pytest

from gemmcompare.errors import SpecError
from gemmcompare.spec import load_spec, parse_spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"

GOOD = """\
name: t
problems:
  - {m: 257, n: 263, k: 251}
  - sweep: {m: [64, 128], n: "=m", k: {pow2: [32, 128]}}
contracts: [f16_f32acc_tn]
implementations: [library.cublas]
baseline: library.cublas
"""


def issues(text):
    with pytest.raises(SpecError) as info:
        parse_spec(text, "spec.yaml")
    return [str(p) for p in info.value.problems]


def test_every_committed_experiment_is_valid():
    specs = committed_specs()
    assert specs, "no experiment specs found"
    for path in specs:
        load_spec(path)  # raises on any problem


def test_sweep_product_and_ties():
    exp = parse_spec(GOOD)
    shapes = [e.problem.label for e in exp.problems]
    assert shapes[0] == "257x263x251"
    assert shapes[1:] == ["64x64x32", "64x64x64", "64x64x128", "128x128x32", "128x128x64", "128x128x128"]
    assert exp.row_count == 7


def test_range_values_include_stop():
    exp = parse_spec(GOOD.replace("k: {pow2: [32, 128]}", "k: {range: [16, 48, 16]}"))
    assert [e.problem.k for e in exp.problems[1:4]] == [16, 32, 48]


def test_typo_in_top_level_key_is_named_with_line_and_suggestion():
    msgs = issues(GOOD.replace("baseline:", "baselin:"))
    assert any("spec.yaml:7: baselin: unknown key 'baselin'" in m and "did you mean 'baseline'" in m for m in msgs), msgs


def test_unknown_implementation_suggests_nearest():
    msgs = issues(GOOD.replace("[library.cublas]", "[library.cublass]").replace("baseline: library.cublas\n", ""))
    assert any("implementations[0]" in m and "did you mean 'library.cublas'" in m for m in msgs), msgs


def test_unknown_contract_suggests_nearest():
    msgs = issues(GOOD.replace("f16_f32acc_tn", "f16_f32ac_tn"))
    assert any("contracts[0]" in m and "f16_f32acc_tn" in m for m in msgs), msgs


@pytest.mark.parametrize("bad", ["0", "-4", "2.5", "true", "'64'", "3000000000"])
def test_dimensions_must_be_positive_integers(bad):
    msgs = issues(GOOD.replace("m: 257", f"m: {bad}"))
    assert any("problems[0].m" in m and ":3:" in m for m in msgs), msgs


def test_all_problems_reported_at_once():
    text = GOOD.replace("m: 257", "m: 0").replace("f16_f32acc_tn", "nope").replace("baseline: library.cublas", "baseline: x")
    msgs = issues(text)
    assert len(msgs) >= 3


def test_tie_to_unknown_dimension():
    msgs = issues(GOOD.replace('n: "=m"', 'n: "=q"'))
    assert any("sweep.n" in m for m in msgs), msgs


def test_baseline_must_be_listed():
    msgs = issues(GOOD.replace("baseline: library.cublas", "baseline: library.torch_matmul"))
    assert any("baseline" in m for m in msgs)


TWO_CONTRACTS = """\
name: t
problems: [{m: 64, n: 64, k: 64}]
contracts: [bf16_bf16out_f32acc_tn, e4m3_bf16out_f32acc_tn_tensor]
implementations: [library.cublas, library.cublaslt_fp8, library.torch_matmul]
"""


def test_each_contract_may_name_its_own_baseline():
    """BF16 and FP8 in one spec have no library row that runs under both: each contract names its own, its rows
    carry it (is_baseline, so % of baseline and the plots' marked baseline), and --only keeps what it keeps."""
    from gemmcompare.plan import narrow
    from gemmcompare.runner.rows import base_row

    exp = parse_spec(TWO_CONTRACTS + "baseline: {bf16_bf16out_f32acc_tn: library.cublas,\n"
                                     "           e4m3_bf16out_f32acc_tn_tensor: library.cublaslt_fp8}\n")
    bf16, fp8 = exp.contracts
    assert exp.baseline is None and exp.baseline_names == ("library.cublas", "library.cublaslt_fp8")
    assert (exp.baseline_for(bf16.name), exp.baseline_for(fp8.name)) == ("library.cublas", "library.cublaslt_fp8")
    row = lambda contract, impl: base_row("r", exp, exp.problems[0], contract, impl, "library", {})  # noqa: E731
    assert row(bf16, "library.cublas").is_baseline and not row(fp8, "library.cublas").is_baseline
    assert row(fp8, "library.cublaslt_fp8").is_baseline and not row(bf16, "library.cublaslt_fp8").is_baseline
    narrowed = narrow(exp, None, False, "cublas$|torch")
    assert narrowed.baselines == (("bf16_bf16out_f32acc_tn", "library.cublas"),)
    assert narrowed.baseline_for(fp8.name) is None
    one = parse_spec(TWO_CONTRACTS + "baseline: library.cublas\n")
    assert one.baseline_for(fp8.name) == "library.cublas" and one.baseline_names == ("library.cublas",)


@pytest.mark.parametrize("baseline, words", [
    ("{f16_f32acc_tn: library.cublas}", "spec.yaml:5: baseline.f16_f32acc_tn: baseline for 'f16_f32acc_tn': not one "
                                        "of this spec's contracts"),
    ("{bf16_bf16out_f32acc_tn: library.cublass}", "baseline 'library.cublass' is not one of this spec's "
                                                  "implementations"),
    ("{bf16_bf16out_f32acc_tn: [library.cublas]}", "baseline must be an implementation name, got a list"),
    ("{}", "baseline is an empty mapping"),
    ("[library.cublas]", "baseline must be an implementation name or a mapping {contract: implementation}, got a "
                         "list"),
])
def test_a_baseline_mapping_with_a_mistake_names_it(baseline, words):
    msgs = issues(TWO_CONTRACTS + f"baseline: {baseline}\n")
    assert any(words in m for m in msgs), msgs


def test_yaml_syntax_error_has_line():
    msgs = issues("name: t\nproblems: [\n")
    assert msgs and msgs[0].startswith("spec.yaml:")


def test_safe_load_only():
    msgs = issues(GOOD + "description: !!python/object/apply:os.system ['echo hi']\n")
    assert any("not valid YAML" in m for m in msgs)


def test_contract_definition():
    exp = parse_spec(GOOD.replace("[f16_f32acc_tn]", "[{name: mine, a: bf16, c: f32, layout: nt, alpha: 2}]"))
    c = exp.contracts[0]
    assert (c.a.value, c.b.value, c.c.value, c.layout, c.alpha) == ("bf16", "bf16", "f32", "nt", 2.0)


def test_bad_timing_settings():
    msgs = issues(GOOD + "timing: {l2: flsh, samples: {min: 10, max: 5}}\n")
    assert any("timing.l2" in m and "flush" in m for m in msgs)
    assert any("samples.max" in m or "timing.samples" in m for m in msgs)


def test_timing_lockstep_is_a_bool():
    assert parse_spec(GOOD + "timing: {lockstep: true}\n").timing.lockstep is True
    assert parse_spec(GOOD).timing.lockstep is False
    msgs = issues(GOOD + "timing: {lockstep: yes please}\n")
    assert any("timing.lockstep" in m and "true or false" in m for m in msgs), msgs


def test_problem_overrides():
    exp = parse_spec(GOOD.replace("- {m: 257, n: 263, k: 251}", "- {name: unit, m: 16, n: 16, k: 16, fixtures: [exact_integers], time: false}"))
    e = exp.problems[0]
    assert (e.name, e.fixtures, e.time) == ("unit", ("exact_integers",), False)


def test_missing_file():
    with pytest.raises(SpecError) as info:
        load_spec("/nonexistent/spec.yaml")
    assert "file not found" in str(info.value)


def test_a_shape_listed_twice_is_an_error():
    msgs = issues(GOOD.replace("- {m: 257, n: 263, k: 251}", "- {m: 64, n: 64, k: 64}\n  - {m: 64, n: 64, k: 64, fixtures: [adversarial]}"))
    assert any("64x64x64 already comes from problems[0]" in m for m in msgs), msgs


def test_a_value_repeated_in_one_sweep_runs_once():
    exp = parse_spec(GOOD.replace("m: [64, 128]", "m: [64, 64]"))
    assert [e.label for e in exp.problems[1:]] == ["64x64x32", "64x64x64", "64x64x128"]
