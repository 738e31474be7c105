"""Energy beside time in `compare`, the report and the store: the energy verdict by the time's noise rule (SAME
within the noise, MORE_ENERGY / LESS_ENERGY beyond it, nothing without figures), the energy_vs_speed plot, the
columns at full precision in a store and a run folder, and an old store without them still loading."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from gemmcompare.results import Result, Status
from gemmcompare.store import RunFolder, Store, load_result_file
from gemmcompare.verdicts import compare, display_comparison
from test_report import BASELINE, make_rows, receipt_for

KERNEL = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"
BIG = ((8192,) * 3,)


def with_energy(rows, *, more=None, spread=0.004, seed=0, batches=7):
    """Seven per-batch energies per row around a per-implementation J per GEMM (x `more[impl]`)."""
    rng = np.random.default_rng(seed)
    for r in rows:
        base = 1.15 * (1.04 if r.implementation == KERNEL else 1.0) * (more or {}).get(r.implementation, 1.0)
        samples = list(base * (1 + spread * rng.standard_normal(batches)))
        r.energy_samples_j, r.energy_j_per_gemm = samples, float(np.median(samples))
        r.energy_ci_rel, r.energy_source, r.avg_power_w = 0.004, "counter", 698.0
        r.gflop_per_j = r.flops / r.energy_j_per_gemm / 1e9
    return rows


def run(run_id, **kw):
    rows = with_energy(make_rows(run_id, BIG, sweep=False, seed=kw.pop("time_seed", 0)), **kw)
    return receipt_for(run_id, "NVIDIA H200"), pd.DataFrame([r.to_record() for r in rows])


def verdict(comp, impl):
    t = comp.table
    return t[t["implementation"] == impl].iloc[0]


def test_two_runs_of_one_energy_are_same():
    comp = compare(run("b", seed=1), run("c", seed=2))
    for impl in (BASELINE, KERNEL):
        r = verdict(comp, impl)
        assert r["energy_verdict"] == "SAME", r["energy_detail"]
    assert "energy (J per GEMM, same rule, not gating): 2 SAME" in comp.summary_text()


def test_more_energy_beyond_the_noise_is_called_and_does_not_gate():
    comp = compare(run("b", seed=1), run("c", seed=2, more={KERNEL: 1.10}))
    k = verdict(comp, KERNEL)
    assert k["energy_verdict"] == "MORE_ENERGY" and k["energy_ratio"] == pytest.approx(1.10, rel=0.01)
    assert "+10." in k["energy_detail"]
    assert verdict(comp, BASELINE)["energy_verdict"] == "SAME"
    assert comp.exit_code == 0  # the time did not move
    shown = display_comparison(comp.table)
    assert {"base J/GEMM", "cand J/GEMM", "energy"} <= set(shown.columns)


def test_less_energy_and_noise_wider_than_the_threshold():
    less = compare(run("b", seed=1), run("c", seed=2, more={KERNEL: 0.9}))
    assert verdict(less, KERNEL)["energy_verdict"] == "LESS_ENERGY"
    noisy = compare(run("b", seed=1, spread=0.08), run("c", seed=2, spread=0.08))
    assert verdict(noisy, KERNEL)["energy_verdict"] == "UNKNOWN"


def test_rows_without_energy_get_no_energy_verdict():
    base = receipt_for("b"), pd.DataFrame([r.to_record() for r in make_rows("b", BIG, sweep=False)])
    comp = compare(base, run("c"))
    k = verdict(comp, KERNEL)
    assert k["energy_verdict"] == "" and "no energy figure in the base" in k["energy_detail"]
    assert "energy (J per GEMM" not in comp.summary_text()


def test_the_stored_ci_is_used_without_samples():
    b, c = run("b", seed=1), run("c", seed=2, more={KERNEL: 1.10})
    for _, df in (b, c):
        df["energy_samples_j"] = "[]"
    assert verdict(compare(b, c), KERNEL)["energy_verdict"] == "MORE_ENERGY"


def test_energy_vs_speed_plot_marks_each_row(tmp_path):
    from gemmcompare.report import build_report

    rows = with_energy(make_rows("r", ((4096,) * 3, (8192,) * 3), sweep=False))
    report = build_report((receipt_for("r"), pd.DataFrame([r.to_record() for r in rows])), tmp_path,
                          plots=["energy_vs_speed"])
    plot = next(p for p in report.plots if p.kind == "energy_vs_speed")
    assert plot.skipped is None and plot.png.exists() and plot.svg.exists()
    assert "baseline" in plot.caption and "counter" in plot.caption
    md = (tmp_path / "report.md").read_text()
    assert "J/GEMM" in md
    # the ranking section: rows whose order by energy differs from their order by time, beyond the noise
    assert "## Ranking by energy against ranking by time" in md
    assert "Ranking by energy against ranking by time" in (tmp_path / "report.html").read_text()


def test_energy_vs_speed_is_skipped_without_energy(tmp_path):
    from gemmcompare.report import build_report

    rows = make_rows("r", BIG, sweep=False)
    report = build_report((receipt_for("r"), pd.DataFrame([r.to_record() for r in rows])), tmp_path,
                          plots=["energy_vs_speed"])
    assert report.plots[0].skipped and "energy figure" in report.plots[0].skipped
    assert "Ranking by energy" not in (tmp_path / "report.md").read_text()


def _row(run_id="r1") -> Result:
    r = Result(run_id, "8x8x8", 8, 8, 8, 1, "c", "library.cublas", "library", {}, Status.PASS, flops=1024)
    r.energy_samples_j, r.energy_j_per_gemm, r.energy_ci_rel = [1e-3, 1.1e-3], 1.05e-3, 0.0123456789
    r.energy_source, r.energy = "power_samples", {"source": "power_samples", "batches": 2}
    return r


def test_energy_columns_round_trip_at_full_precision(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.create_run({"run_id": "r1", "status": "done"})
        store.add_result(_row())
        got = store.results("r1").iloc[0]
    assert got["energy_ci_rel"] == 0.0123456789 and got["energy_source"] == "power_samples"
    assert got["energy_samples_j"] == [1e-3, 1.1e-3] and got["energy"]["batches"] == 2
    folder = RunFolder(tmp_path / "run")
    folder.write_receipt({"run_id": "r1"})
    folder.add(_row())
    _, df = load_result_file(tmp_path / "run")
    assert df.iloc[0]["energy_j_per_gemm"] == 1.05e-3


def test_an_old_store_without_the_energy_columns_loads(tmp_path):
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.create_run({"run_id": "r1", "status": "done"})
        store.add_result(_row())
    conn = sqlite3.connect(path)  # as a store from before energy: the columns gone
    for col in ("energy_j_per_gemm", "energy_ci_rel", "energy_samples_j", "avg_power_w", "gflop_per_j",
                "energy_source", "energy_sm_clock_mhz", "energy_throttled_fraction", "energy"):
        conn.execute(f"ALTER TABLE results DROP COLUMN {col}")
    conn.commit()
    conn.close()
    with Store.open_read(path) as store:
        rows = store.results("r1")
    assert len(rows) == 1 and "energy_j_per_gemm" not in rows.columns
    comp = compare(({"gpu": "H200"}, rows), ({"gpu": "H200"}, rows))
    assert comp.table.iloc[0]["energy_verdict"] == ""
    with Store(path) as store:  # opened to add to: the columns come back, empty for the old row
        assert pd.isna(store.results("r1").iloc[0]["energy_j_per_gemm"])


def test_dashboard_energy_series_has_gflop_per_joule_with_its_ci():
    from gemmcompare.dashboard.runs import Run
    from gemmcompare.dashboard.series import METRICS, build_series
    from gemmcompare.report.data import normalise_rows

    runs = []
    for i in range(3):
        rows = make_rows(f"r{i}", BIG, sweep=False, seed=i)
        if i:  # the first run is from before energy was measured
            with_energy(rows, seed=i)
        frame = normalise_rows(pd.DataFrame([r.to_record() for r in rows]))
        runs.append(Run(f"r{i}", "NVIDIA H200", "synthetic", f"c{i}", False, f"2025-01-0{i + 1}T00:00:00", "memory",
                        receipt_for(f"r{i}"), frame))
    s = build_series(runs, "NVIDIA H200", runs[0].rows["contract"].iloc[0],
                     "8192x8192x8192", metric="gflop_per_j")
    k = s.points[s.points["implementation"] == KERNEL]
    assert np.isnan(k["value"].iloc[0])  # no energy in the first run
    later = k.iloc[1:]
    assert ((later["lo"] < later["value"]) & (later["value"] < later["hi"])).all()
    assert later["value"].between(500, 2000).all()  # 2 x 8192^3 FLOP in ~1.2 J and "joule" in METRICS["gflop_per_j"]
