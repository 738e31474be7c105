"""`compare` against the machine's power state: a same-GPU verdict holds a change of time against the same-run
baseline's % and the rows' throttling and clocks. The committed pair of runs of one spec at one commit
(timing_check/run1, run2: both power-capped at 8192^3) must not exit 1; a planted slowdown must."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gemmcompare.verdicts import compare
from gemmcompare.store.run_folder import load_result_file
from test_report import BASELINE, make_rows, receipt_for

H200 = Path(__file__).resolve().parents[1] / "experiments" / "studies" / "timing" / "h200"
KERNEL = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"
BIG = ((8192,) * 3,)


def run(run_id, *, slowdown=None, throttled=None, clocks=None, seed=0, cv=0.005):
    """One synthetic run (cuBLAS baseline and one kernel at 8192^3): `throttled` and `clocks` map an
    implementation to its throttled fraction and SM clock."""
    rows = make_rows(run_id, BIG, slowdown=slowdown, sweep=False, seed=seed, cv=cv)
    for r in rows:
        r.throttled_fraction = (throttled or {}).get(r.implementation, 0.0)
        r.sm_clock_mhz = (clocks or {}).get(r.implementation, 1980.0)
    return receipt_for(run_id, "NVIDIA H200"), pd.DataFrame([r.to_record() for r in rows])


def row(comp, impl):
    t = comp.table
    return t[t["implementation"] == impl].iloc[0]


def test_two_runs_of_one_spec_at_one_commit_do_not_regress():
    base, cand = (load_result_file(H200 / "timing-check" / name) for name in ("run1", "run2"))
    comp = compare(base, cand)
    t = comp.table
    big = t[(t["problem"] == "8192x8192x8192") & (t["implementation"] == "library.cublas")].iloc[0]
    # the time did move 11.7% (what the old rule called SLOWER): the base run was power-capped
    assert big["ratio"] == pytest.approx(1.117, abs=0.005)
    assert big["verdict"] == "UNKNOWN" and "THROTTLED base 67%" in big["detail"]
    assert comp.exit_code == 0 and "no regression" in comp.summary_text()
    assert "THROTTLED" in big["throttled"]


def test_baseline_drift_a_kernel_that_moved_with_its_baseline_is_same():
    # the whole card ran 10% slower in the candidate (both rows, interleaved in one run): the kernel's share
    # of the baseline is unchanged, so the kernel is SAME; the baseline row, throttled, is UNKNOWN
    comp = compare(run("b"), run("c", slowdown={BASELINE: 1.10, KERNEL: 1.10},
                                 throttled={BASELINE: 0.9, KERNEL: 0.9}, clocks={BASELINE: 1800, KERNEL: 1800}))
    k = row(comp, KERNEL)
    assert k["verdict"] == "SAME" and "baseline moved as much" in k["detail"]
    assert row(comp, BASELINE)["verdict"] == "UNKNOWN"
    assert comp.exit_code == 0


def test_the_baseline_row_at_another_clock_is_unknown_even_without_a_cap_flag():
    comp = compare(run("b"), run("c", slowdown={BASELINE: 1.10, KERNEL: 1.10}, clocks={BASELINE: 1800, KERNEL: 1800}))
    b = row(comp, BASELINE)
    assert b["verdict"] == "UNKNOWN" and "SM clock 1980 -> 1800 MHz" in b["detail"]


def test_a_planted_slowdown_is_slower_unthrottled():
    comp = compare(run("b"), run("c", slowdown={KERNEL: 1.10}))
    k = row(comp, KERNEL)
    assert k["verdict"] == "SLOWER" and "agrees" in k["detail"]
    assert row(comp, BASELINE)["verdict"] == "SAME"
    assert comp.exit_code == 1


def test_a_planted_slowdown_is_still_slower_when_both_runs_are_throttled():
    # the same power state in both runs, the baseline steady: the kernel's share of it fell 10%
    state = dict(throttled={BASELINE: 0.8, KERNEL: 0.9}, clocks={BASELINE: 1500, KERNEL: 1480})
    comp = compare(run("b", **state), run("c", slowdown={KERNEL: 1.10}, **state))
    k = row(comp, KERNEL)
    assert k["verdict"] == "SLOWER" and k["detail"].startswith("THROTTLED base 90%, candidate 90%")
    assert comp.exit_code == 1


def test_time_slower_but_share_of_a_faster_baseline_unclear_is_unknown():
    # the kernel +10%, the baseline +6%: % of baseline moved 3.8% the other way of nothing clear
    comp = compare(run("b", cv=0.02), run("c", slowdown={KERNEL: 1.10, BASELINE: 1.07}, cv=0.02, seed=3))
    k = row(comp, KERNEL)
    assert k["verdict"] in ("UNKNOWN", "SAME") and "baseline" in k["detail"]
    assert k["verdict"] != "SLOWER"


def test_display_has_the_clock_scaled_times_and_throttling(tmp_path):
    from gemmcompare.verdicts import display_comparison

    base, cand = run("b"), run("c", throttled={KERNEL: 0.7})
    for _, df in (base, cand):
        df["median_ms_at_max_clock"] = df["median_ms"] * 0.75
    shown = display_comparison(compare(base, cand).table)
    assert {"base ms @max clock", "cand ms @max clock", "throttled"} <= set(shown.columns)
    assert "THROTTLED candidate 70%" in set(shown["throttled"])


def test_a_throttled_row_whose_clock_explains_the_change_is_unknown():
    # the kernel heated more than its baseline in the candidate run: slower by time and by share, but at
    # the recorded clocks the same
    base = run("b", throttled={KERNEL: 0.6}, clocks={BASELINE: 1980, KERNEL: 1800})
    cand = run("c", slowdown={KERNEL: 1.10}, throttled={KERNEL: 0.9}, clocks={BASELINE: 1980, KERNEL: 1636})
    for (_, df), clocks in ((base, {KERNEL: 1800}), (cand, {KERNEL: 1636})):
        df["median_ms_at_max_clock"] = [m * clocks.get(i, 1980) / 1980 for m, i in zip(df["median_ms"],
                                                                                    df["implementation"])]
    k = row(compare(base, cand), KERNEL)
    assert k["verdict"] == "UNKNOWN" and "@max clock" in k["detail"] and "power state" in k["detail"]


def test_a_planted_slowdown_at_the_same_clock_stays_slower_with_clock_scaled_times():
    state = dict(throttled={BASELINE: 0.8, KERNEL: 0.9}, clocks={BASELINE: 1500, KERNEL: 1480})
    base, cand = run("b", **state), run("c", slowdown={KERNEL: 1.10}, **state)
    for _, df in (base, cand):
        df["median_ms_at_max_clock"] = df["median_ms"] * df["sm_clock_mhz"] / 1980
    k = row(compare(base, cand), KERNEL)
    assert k["verdict"] == "SLOWER"
