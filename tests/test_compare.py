"""Regression tracking on synthetic stored runs: verdicts, exit codes, cross-GPU normalisation, history, CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gemmcompare.verdicts import MIN_SAMPLES, compare, judge, ratio_ticks, shift_interval, write_comparison
from gemmcompare.history import HistoryError, history, write_history
from gemmcompare.results import Status
from gemmcompare.store import Store
from test_report import BASELINE, COMMITTED, MMA, cli, make_rows, receipt_for, store_run

SLOW = MMA.format(smem="swizzle", stages=3)
CUTLASS = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"


def pair(run_id, gpu="NVIDIA H200", **kw):
    rows = make_rows(run_id, **kw)
    return receipt_for(run_id, gpu), pd.DataFrame([r.to_record() for r in rows])


def verdicts(comp, impl=None):
    t = comp.table
    return set(t[t["implementation"] == impl]["verdict"]) if impl else set(t["verdict"])


# -- statistics --------------------------------------------------------------------------------------------------

def test_shift_interval_covers_a_known_shift():
    rng = np.random.default_rng(7)
    base = 1.0 * (1 + 0.01 * rng.standard_normal(50))
    cand = 1.10 * (1 + 0.01 * rng.standard_normal(50))
    lo, hi = shift_interval(base, cand, 0.95)
    assert lo < math.log(1.10) < hi and hi - lo < 0.02
    assert shift_interval(base[:2], cand[:2], 0.95) is None  # too few for 95%


def test_judge_rule():
    t = 0.03
    assert judge(math.log(1.10), (0.08, 0.11), t)[0] == "SLOWER"
    assert judge(math.log(0.90), (-0.11, -0.09), t)[0] == "FASTER"
    assert judge(math.log(1.10), (-0.01, 0.2), t)[0] == "UNKNOWN"  # beyond the threshold, within the noise
    assert judge(0.01, (0.0, 0.02), t)[0] == "SAME"
    assert judge(0.01, (-0.08, 0.10), t)[0] == "UNKNOWN"  # noise wider than the threshold
    assert judge(0.0, None, t)[0] == "UNKNOWN"


# -- verdicts ---------------------------------------------------------------------------------------------------

def test_identical_runs_are_same():
    base = pair("r1")
    comp = compare(base, base)
    assert verdicts(comp) == {"SAME"} and comp.exit_code == 0
    assert not comp.normalised and "median time" in comp.basis


def test_planted_10_percent_regression_is_slower():
    comp = compare(pair("r1", seed=1), pair("r2", seed=2, slowdown={SLOW: 1.10}))
    assert verdicts(comp, SLOW) == {"SLOWER"}
    others = comp.table[comp.table["implementation"] != SLOW]
    assert set(others["verdict"]) == {"SAME"}
    assert comp.exit_code == 1 and comp.regressed
    row = comp.table[comp.table["implementation"] == SLOW].iloc[0]
    assert 1.08 < row["ratio"] < 1.12 and row["ratio_lo"] > 1.0
    assert "SLOWER" in comp.summary_text() and "REGRESSED (exit 1)" in comp.summary_text()
    assert comp.table["verdict"].iloc[0] == "SLOWER"  # worst first


def test_planted_speedup_is_faster_and_passes():
    comp = compare(pair("r1", seed=1), pair("r2", seed=2, slowdown={SLOW: 0.85}))
    assert verdicts(comp, SLOW) == {"FASTER"} and comp.exit_code == 0


def test_planted_correctness_regression():
    comp = compare(pair("r1"), pair("r2", seed=3, statuses={SLOW: Status.FAIL}))
    assert verdicts(comp, SLOW) == {"REGRESSION"}
    detail = comp.table[comp.table["implementation"] == SLOW]["detail"].iloc[0]
    assert detail.startswith("PASS -> FAIL")
    assert comp.exit_code == 1
    crash = compare(pair("r1"), pair("r2", statuses={CUTLASS: Status.CRASH}))
    assert verdicts(crash, CUTLASS) == {"REGRESSION"} and crash.exit_code == 1


def test_noisy_pair_is_same_or_unknown():
    # 25% CV with 8 samples: no verdict of speed can be trusted, and none may fail the gate
    for seed in range(5):
        comp = compare(pair("r1", cv=0.25, n=8, seed=10 + seed), pair("r2", cv=0.25, n=8, seed=20 + seed))
        assert verdicts(comp) <= {"SAME", "UNKNOWN"}, comp.summary_text()
        assert "UNKNOWN" in verdicts(comp)
        assert comp.exit_code == 0


def test_too_few_samples_is_unknown():
    comp = compare(pair("r1", n=MIN_SAMPLES - 1), pair("r2", n=MIN_SAMPLES - 1, slowdown={SLOW: 1.5}))
    assert verdicts(comp) == {"UNKNOWN"} and comp.exit_code == 0
    assert "too few samples" in comp.table["detail"].iloc[0]


def test_stored_ci_is_used_when_samples_are_missing():
    (rb, b), (rc, c) = pair("r1"), pair("r2", slowdown={SLOW: 1.10})
    b["samples_ms"], c["samples_ms"] = "[]", "[]"
    comp = compare((rb, b), (rc, c))
    assert verdicts(comp, SLOW) == {"SLOWER"} and verdicts(comp, BASELINE) == {"SAME"}


def test_new_gone_skipped_fixed():
    everything = [BASELINE, SLOW, CUTLASS, MMA.format(smem="padded", stages=2)]
    base = pair("r1", impls=[BASELINE, SLOW, MMA.format(smem="padded", stages=2)],
                statuses={MMA.format(smem="padded", stages=2): Status.FAIL})
    cand = pair("r2", impls=[BASELINE, CUTLASS, MMA.format(smem="padded", stages=2)])
    comp = compare(base, cand)
    assert verdicts(comp, CUTLASS) == {"NEW"} and verdicts(comp, SLOW) == {"GONE"}
    assert verdicts(comp, MMA.format(smem="padded", stages=2)) == {"FIXED"}
    assert comp.exit_code == 0
    skipped = compare(pair("r1", impls=everything), pair("r2", impls=everything, statuses={SLOW: Status.SKIP}))
    assert verdicts(skipped, SLOW) == {"SKIPPED"} and skipped.exit_code == 0


def test_two_gpus_are_compared_on_normalised_figures():
    problems = [(s, s, s) for s in (1024, 2048, 4096)]
    base = pair("h200", "NVIDIA H200", problems=problems)
    same = pair("a100", "NVIDIA A100-SXM4-80GB", problems=problems, gpu_scale=312 / 989.4, peak=312.0, seed=5)
    comp = compare(base, same)
    assert comp.normalised and "different GPUs" in comp.summary_text()
    assert "raw times are shown, not judged" in comp.summary_text()
    assert verdicts(comp) == {"SAME"}, comp.summary_text()  # 3x slower in time, same standing against cuBLAS
    assert comp.exit_code == 0
    t = comp.table
    assert set(t[t["is_baseline"]]["metric"]) == {"pct_of_peak"}
    assert set(t[~t["is_baseline"]]["metric"]) == {"pct_of_baseline"}
    assert (t["cand_median_ms"] > 2.5 * t["base_median_ms"]).all()  # raw times shown
    worse = pair("a100", "NVIDIA A100-SXM4-80GB", problems=problems, gpu_scale=312 / 989.4, peak=312.0, seed=5,
                 slowdown={SLOW: 1.15})
    comp = compare(base, worse)
    assert verdicts(comp, SLOW) == {"SLOWER"} and comp.exit_code == 1


@pytest.mark.skipif(not COMMITTED.exists(), reason="no committed quickstart receipt")
def test_committed_h200_run_against_itself_does_not_regress():
    from gemmcompare.store import load_result_file
    run = load_result_file(COMMITTED)
    comp = compare(run, run)
    assert verdicts(comp) <= {"SAME", "UNKNOWN"} and comp.exit_code == 0
    assert (comp.table["ratio"] == 1.0).all()


def test_baseline_moving_is_noted():
    comp = compare(pair("r1"), pair("r2", slowdown={BASELINE: 1.2}))
    assert any("the baseline itself is SLOWER" in n for n in comp.notes)


def test_timing_policy_difference_is_noted():
    (rb, b), (rc, c) = pair("r1"), pair("r2")
    rc["timing"] = dict(rc["timing"], l2="warm")
    comp = compare((rb, b), (rc, c))
    assert any("'l2' differs" in n for n in comp.notes)


def test_write_comparison_files(tmp_path):
    comp = compare(pair("r1"), pair("r2", slowdown={SLOW: 1.10}, statuses={CUTLASS: Status.FAIL}))
    files = write_comparison(comp, tmp_path / "cmp")
    names = {f.name for f in files}
    assert {"compare.csv", "compare.md", "compare.html", "compare_ratios.png", "compare_ratios.svg"} <= names
    assert (tmp_path / "cmp" / "compare_ratios.png").stat().st_size > 5000
    html = (tmp_path / "cmp" / "compare.html").read_text()
    assert "data:image/png;base64," in html and "verdict-SLOWER" in html and "verdict-REGRESSION" in html
    back = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    assert len(back) == len(comp.table)


# -- history ---------------------------------------------------------------------------------------------------

def _three_runs(tmp_path):
    store = Store(tmp_path / "g.db")
    for i, (day, commit, slow) in enumerate((("01", "aaa1111", 1.0), ("02", "bbb2222", 1.0), ("03", "ccc3333", 1.1))):
        store_run(store, f"2025-01-{day}-run", make_rows(f"2025-01-{day}-run", seed=i, slowdown={SLOW: slow}),
                  started=f"2025-01-{day}T10:00:00", commit=commit)
    return store


def test_history_table_and_plot(tmp_path):
    store = _three_runs(tmp_path)
    h = history(store, SLOW, problem="4096x4096x4096")
    assert list(h.table["git_commit"]) == ["aaa1111", "bbb2222", "ccc3333"]
    assert h.table["tflops"].iloc[2] < h.table["tflops"].iloc[0] * 0.95
    files = write_history(h, tmp_path / "hist")
    assert (tmp_path / "hist" / "history.png").stat().st_size > 5000
    assert {f.name for f in files} >= {"history.csv", "history.md", "history.html", "history.png"}
    assert "aaa1111" in h.text()
    assert len(history(store, "cublas").table) == 9  # a unique part of a name is enough


def test_history_errors_name_the_thing(tmp_path):
    store = _three_runs(tmp_path)
    with pytest.raises(HistoryError, match="library.cublass.*did you mean 'library.cublas'"):
        history(store, "library.cublass")
    with pytest.raises(HistoryError, match="matches 8 implementations .at most 6"):
        history(store, ".")  # a regular expression that matches every name
    assert len(history(store, "mma_sync").implementations) == 6  # each one its own series
    with pytest.raises(HistoryError, match="no stored row for problem '5x5x5'"):
        history(store, BASELINE, problem="5x5x5")


# -- CLI --------------------------------------------------------------------------------------------------------

def test_cli_compare_exit_codes(tmp_path, capsys):
    db = tmp_path / "g.db"
    store = Store(db)
    store_run(store, "20250101-base", make_rows("20250101-base", seed=1), folder=tmp_path / "runs" / "base",
              started="2025-01-01T00:00:00")
    store_run(store, "20250102-same", make_rows("20250102-same", seed=2), started="2025-01-02T00:00:00")
    store_run(store, "20250103-slow", make_rows("20250103-slow", seed=3, slowdown={SLOW: 1.10}),
              started="2025-01-03T00:00:00")
    out = tmp_path / "cmp"
    assert cli(["compare", "20250101-base", "20250102-same", "--store", db, "--out", out]) == 0
    assert "no regression (exit 0)" in capsys.readouterr().out
    assert cli(["compare", "--baseline", tmp_path / "runs" / "base", "latest", "--store", db, "--out", out]) == 1
    text = capsys.readouterr().out
    assert "SLOWER" in text and "REGRESSED" in text and (out / "compare.html").exists()
    assert cli(["compare", "--baseline", tmp_path / "runs" / "base" / "results.csv", "20250103", "--store", db,
                "--threshold", "20%", "--out", out]) == 0  # a 10% change is within a 20% threshold
    capsys.readouterr()
    assert cli(["compare", "20250101-base", "nosuchrun", "--store", db]) == 2
    err = capsys.readouterr().err
    assert "no run 'nosuchrun'" in err and "Traceback" not in err
    assert cli(["compare", "2025010", "latest", "--store", db]) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert cli(["compare", "--baseline", tmp_path / "nope" / "results.csv", "latest", "--store", db]) == 2
    assert "nope/results.csv: no such run folder, results file or store" in capsys.readouterr().err
    assert cli(["compare", "latest", "--store", db]) == 2  # one run and no --baseline


def test_cli_history(tmp_path, capsys):
    _three_runs(tmp_path)
    db = tmp_path / "g.db"
    assert cli(["history", SLOW, "--problem", "4096x4096x4096", "--store", db, "--out", tmp_path / "h"]) == 0
    assert "ccc3333" in capsys.readouterr().out and (tmp_path / "h" / "history.png").exists()
    assert cli(["history", "nothing_like_it", "--store", db]) == 2
    assert "no stored result for implementation 'nothing_like_it'" in capsys.readouterr().err
    assert cli(["history", BASELINE, "--store", tmp_path / "missing.db"]) == 2


def test_threshold_from_the_candidate_receipt():
    from gemmcompare.cli.options import threshold_arg
    from gemmcompare.receipt import compare_threshold
    assert compare_threshold({"compare_threshold": 0.05}) == 0.05
    assert compare_threshold({"report": {"threshold": "0.1"}}) == 0.1
    assert compare_threshold({}) == 0.03 and compare_threshold({"compare_threshold": 7}) == 0.03
    assert threshold_arg("3%") == 0.03 and threshold_arg("0.05") == 0.05


def test_cupti_rows_from_before_the_launch_window_compare_on_one_definition():
    """A small kernel's CUPTI figure gained the GPU's launch window (0.80 us on an H200): a run from before
    it against one after is not a +20% regression. The base's spans are put on the candidate's window."""
    def small(run_id, seed, window_ms):
        receipt, df = pair(run_id, seed=seed)
        rng = np.random.default_rng(seed)
        samples = [list(0.0038 * (1 + 0.002 * rng.standard_normal(60)) + window_ms) for _ in range(len(df))]
        df["samples_ms"] = samples
        df["median_ms"] = [float(np.median(s)) for s in samples]
        df["timing_method"] = "cupti"
        df["timing"] = [{"launch_window_ms": window_ms} if window_ms else {} for _ in range(len(df))]
        return receipt, df

    before, after = small("r1", 1, 0.0), small("r2", 2, 0.0008)
    comp = compare(before, after)
    assert verdicts(comp) == {"SAME"} and comp.exit_code == 0
    assert "launch window (0.00 -> 0.80 us)" in comp.table["detail"].iloc[0]
    events = (after[0], after[1].assign(timing_method="events"))
    assert "launch window" not in compare(before, events).table["detail"].iloc[0]  # only CUPTI rows are shifted


@pytest.mark.parametrize("worst", [1.03, 1.06, 1.12, 1.2, 1.35, 1.8, 3.0])
def test_the_ratio_axis_labels_a_tick_near_the_worst_row(worst):
    """A planted 18-20% slowdown was drawn on an axis whose last label was 1.1 (H200, 5236016): the reader
    had to guess how far beyond it the points sat. On each side the outermost label is no further inside
    the worst row than the spacing labels keep (the plot's half-width is 1.15 x the worst log ratio)."""
    half = math.log(worst) * 1.15
    gap = 2 * half / 9
    ticks = ratio_ticks(half)
    assert 1.0 in ticks and len(ticks) <= 11
    assert math.log(max(ticks)) >= math.log(worst) - gap, ticks
    assert -math.log(min(ticks)) >= math.log(worst) - gap, ticks
    logs = sorted(math.log(t) for t in ticks)
    assert min(b - a for a, b in zip(logs, logs[1:])) >= gap - 1e-12  # none crowding its neighbour
