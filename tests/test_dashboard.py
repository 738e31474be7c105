"""`gemmcompare dashboard`: step flags on synthetic series (a planted step is flagged, noise is not), the site
from synthetic stores and from every committed receipt, its errors, and the pages in headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from browser_check import check_page, find_browser
from gemmcompare.cli import main
from gemmcompare.dashboard import build_dashboard
from gemmcompare.dashboard.runs import Run, find_runs
from gemmcompare.store.run_folder import RESULT_FILES
from gemmcompare.dashboard.series import build_series
from gemmcompare.dashboard.steps import flagged, series_steps
from gemmcompare.report.data import normalise_rows
from gemmcompare.store import Store
from test_report import BASELINE, CONTRACT, MMA, make_rows, receipt_for, store_run

SLOW = MMA.format(smem="swizzle", stages=3)
PROBLEMS = ((1024,) * 3, (2048,) * 3, (4096,) * 3)
RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "studies"


def synthetic_runs(n_runs: int, *, step_at: int | None = None, factor: float = 1.15, cv: float = 0.015) -> list[Run]:
    """n_runs runs of one spec: every implementation's samples drawn afresh around the same medians (jitter
    `cv`), and SLOW's times multiplied by `factor` from run `step_at` on."""
    runs = []
    for i in range(n_runs):
        slowdown = {SLOW: factor} if step_at is not None and i >= step_at else None
        rows = pd.DataFrame([r.to_record() for r in make_rows(f"r{i}", PROBLEMS, slowdown=slowdown, cv=cv, n=30,
                                                              seed=100 + i)])
        runs.append(Run(f"r{i}", "NVIDIA H200", "synthetic", f"c{i:06d}", False, f"2025-01-{i + 1:02d}T00:00:00",
                        "memory", receipt_for(f"r{i}"), normalise_rows(rows)))
    return runs


def all_flags(runs: list[Run], threshold: float = 0.03) -> pd.DataFrame:
    return pd.concat([flagged(series_steps(runs, CONTRACT, "x".join(map(str, p)), threshold)).assign(
        problem="x".join(map(str, p))) for p in PROBLEMS], ignore_index=True)


def test_a_planted_15_percent_step_is_flagged_where_it_is_and_nowhere_else():
    flags = all_flags(synthetic_runs(8, step_at=5))
    assert len(flags) == len(PROBLEMS), flags[["implementation", "cand_run", "verdict", "detail"]]
    assert set(flags["implementation"]) == {SLOW} and set(flags["verdict"]) == {"SLOWER"}
    assert set(flags["base_run"]) == {"r4"} and set(flags["cand_run"]) == {"r5"}
    assert flags["ratio"].between(1.12, 1.18).all()


def test_noise_alone_flags_no_step():
    runs = synthetic_runs(12)
    steps = pd.concat([series_steps(runs, CONTRACT, "x".join(map(str, p))) for p in PROBLEMS])
    assert len(steps) == 11 * 8 * len(PROBLEMS)  # every consecutive pair of every implementation was judged
    assert flagged(steps).empty, flagged(steps)[["implementation", "cand_run", "verdict", "detail"]]
    assert (steps["verdict"] == "SAME").mean() > 0.9


def test_a_step_below_the_threshold_is_not_a_flag():
    assert all_flags(synthetic_runs(8, step_at=5), threshold=0.2).empty


def test_a_speedup_and_a_baseline_move_are_told_apart():
    runs = synthetic_runs(6, step_at=3, factor=0.85)
    flags = all_flags(runs)
    assert set(flags["verdict"]) == {"FASTER"} and set(flags["cand_run"]) == {"r3"}
    # the whole machine 15% slower in run 3 (baseline too): the baseline's own step is flagged, the others,
    # whose % of baseline did not move, are not
    machine = synthetic_runs(6)
    for run in machine[3:]:
        run.rows["median_ms"] *= 1.15
        run.rows["samples_ms"] = [[v * 1.15 for v in s] for s in run.rows["samples_ms"]]
    flags = all_flags(machine)
    assert set(flags["implementation"]) == {BASELINE} and set(flags["verdict"]) == {"SLOWER"}


def test_series_points_carry_ci_throttled_and_peak_share():
    runs = synthetic_runs(3)
    runs[1].rows.loc[runs[1].rows["implementation"] == SLOW, "throttled_fraction"] = 0.9
    s = build_series(runs, "NVIDIA H200", CONTRACT, "4096x4096x4096", metric="pct_of_peak")
    slow = s.points[s.points["implementation"] == SLOW]
    assert list(slow["throttled"]) == [False, True, False]
    assert ((slow["lo"] < slow["value"]) & (slow["value"] < slow["hi"])).all()
    assert slow["value"].between(1, 100).all() and s.baseline == BASELINE


# -- the site ------------------------------------------------------------------------------------------------

def _store(path: Path) -> Path:
    store = Store(path)
    for i, gpu in enumerate(["NVIDIA H200", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"]):
        scale = 1.0 if "H200" in gpu else 2.5
        rows = make_rows(f"s{i}", PROBLEMS, seed=i, gpu_scale=scale, slowdown={SLOW: 1.2} if i == 1 else None)
        store_run(store, f"s{i}", rows, gpu=gpu, started=f"2025-02-0{i + 1}T00:00:00", commit=f"abc{i}<b>")
    store.close()
    return path


def test_site_from_a_store_of_two_gpus(tmp_path):
    d = build_dashboard([_store(tmp_path / "g.db")], tmp_path / "site", metric="pct_of_peak", progress=False)
    assert len(d.runs) == 3 and len(d.series_pages) == 2 * len(PROBLEMS)
    index = d.index.read_text()
    assert "abc1&lt;b&gt;" in index and "<b>" not in index  # text from receipts is escaped
    assert "1 SLOWER" in index  # s1 against s0 on the H200
    across = list((tmp_path / "site" / "across").glob("*.html"))
    assert len(across) == len(PROBLEMS)
    for href in re.findall(r"href='([^']+)'", index):
        assert (d.out / href).exists(), href
    page = next(p for p in d.series_pages if "H200" in p.name and "4096" in p.name).read_text()
    assert "% of the GPU&#x27;s peak" in page and "SLOWER" in page and (d.out / "series" / re.search(
        r"<img src='([^']+)'", page).group(1)).exists()


def test_bad_inputs_are_exit_2_naming_them(tmp_path, capsys):
    empty = tmp_path / "nothing"
    empty.mkdir()
    (empty / "README.md").write_text("not a run")
    assert main(["dashboard", str(empty), "--out", str(tmp_path / "site")]) == 2
    assert f"{empty}: holds no run" in capsys.readouterr().err
    assert main(["dashboard", str(tmp_path / "missing"), "--out", str(tmp_path / "site")]) == 2
    assert "missing: no such run folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["dashboard", str(_store(tmp_path / "g.db")), "--out", str(tmp_path / "file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.fixture(scope="module")
def committed_site(tmp_path_factory):
    if not RESULTS.exists():
        pytest.skip("no committed receipts")
    out = tmp_path_factory.mktemp("site")
    assert main(["dashboard", str(RESULTS), "--out", str(out), "--no-progress"]) == 0
    return out


@pytest.mark.newest_only
def test_the_site_of_every_committed_receipt(committed_site):
    receipts = {p.parent for pattern in RESULT_FILES for p in RESULTS.rglob(pattern)}
    runs = find_runs([RESULTS])
    assert len(runs) == len(receipts)
    index = (committed_site / "index.html").read_text()
    for spec in {r.spec for r in runs}:
        assert f"<td class='text'>{spec}</td>" in index, spec
    for href in re.findall(r"href='([^']+)'", index):
        assert (committed_site / href).exists(), href
    # the hopper ladder's study run is its main series; the three repeat runs at 8192^3 are a part of it whose
    # latest step reads SLOWER (a verdict in a cell, not the page's CSS, which names every verdict's colour)
    # the H200's column is found by its header: receipts from another GPU add columns before or after it
    gpus = re.findall(r"<th class='[^']*'>(.*?)</th>", index.split("</thead>")[0])
    h200 = gpus.index("NVIDIA H200")
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", index, re.S):
        cells = [(cls, re.sub(r"<[^>]+>", "", text)) for cls, text in re.findall(r"<td class='([^']*)'>(.*?)</td>", row, re.S)]
        if len(cells) > h200 and cells[0][1] == "hopper-ladder":
            rows[cells[1][1]] = cells[h200]
    assert rows["main"][1].endswith("first run: nothing to compare with"), rows
    (part,) = [v for k, v in rows.items() if k.startswith("part: 5 implementations × 1 problem (8192x8192x8192)")]
    assert "verdict-SLOWER" in part[0] and "1 SLOWER" in part[1], part


needs_browser = pytest.mark.skipif(find_browser() is None,
                                   reason="no chromium binary (Debian: apt-get install -y chromium); .ci/run installs it")


@pytest.mark.newest_only
@needs_browser
def test_index_and_a_series_page_load_in_headless_chromium(committed_site):
    series = committed_site / "series" / "NVIDIA_H200__f16_f32acc_tn__4096x4096x4096.html"
    for page in (committed_site / "index.html", series):
        result = check_page(page)
        assert result["errors"] == [] and result["console"] == [], (page, result)
        assert result["broken_images"] == [], (page, result)
        assert result["page_width"] <= result["viewport"], (page, result)
