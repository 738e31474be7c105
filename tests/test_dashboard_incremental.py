"""A dashboard built again into the same folder draws only the pages whose inputs changed (the manifest in the
folder says what each page was drawn from): nothing when nothing changed, exactly a changed run's pages, and
the files of a removed run's pages are deleted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from gemmcompare.dashboard import build_dashboard
from gemmcompare.dashboard.manifest import MANIFEST, cell_digests, code_fingerprint
from gemmcompare.store.run_folder import RunFolder
from test_dashboard import PROBLEMS, SLOW
from test_report import make_rows, receipt_for

SPEC = "study"


def write_run(root: Path, run_id: str, day: int, *, problems=PROBLEMS, slowdown=None, spec: str = SPEC,
              impls=None, rows=None, **receipt) -> Path:
    """A run folder as `run` writes it: receipt.json and results.json (and .csv), made afresh."""
    folder = root / run_id
    if folder.exists():
        shutil.rmtree(folder)
    rows = rows or make_rows(run_id, problems, slowdown=slowdown, impls=impls, seed=day, n=30)
    rf = RunFolder(folder)
    rf.write_receipt(receipt_for(run_id, spec_name=spec, started_at=f"2025-03-{day:02d}T00:00:00",
                                 git_commit=f"c{day:06d}", **receipt))
    rf.add_many(rows)
    return folder


def three_runs(root: Path) -> Path:
    for day in (1, 2, 3):
        write_run(root, f"r{day}", day, slowdown={SLOW: 1.2} if day == 3 else None)
    return root


def test_an_unchanged_second_build_draws_nothing(tmp_path):
    runs, out = three_runs(tmp_path / "runs"), tmp_path / "site"
    first = build_dashboard([runs], out, progress=False)
    assert first.drawn and not first.unchanged  # every page, the index among them
    assert {p.relative_to(out).as_posix() for p in first.pages} == set(first.drawn)
    manifest = json.loads((out / MANIFEST).read_text())
    assert set(manifest["pages"]) == set(first.drawn)
    assert all((out / f).is_file() for entry in manifest["pages"].values() for f in entry["files"])
    second = build_dashboard([runs], out, progress=False)
    assert second.drawn == [] and second.removed == []
    assert sorted(second.unchanged) == sorted(first.drawn)
    assert (out / "index.html").read_text() == first.index.read_text()
    # another option draws the series pages again (their figures show it), not the pages of the runs
    third = build_dashboard([runs], out, metric="pct_of_peak", progress=False)
    assert {p.split("/")[0] for p in third.drawn} == {"series", "index.html"}


def test_a_changed_run_redraws_exactly_its_pages_and_a_removed_runs_pages_go(tmp_path):
    runs, out = three_runs(tmp_path / "runs"), tmp_path / "site"
    write_run(runs, "probe", 4, problems=((512,) * 3,), spec="probe")  # the only run of 512^3
    first = build_dashboard([runs], out, progress=False)
    series = {p.name for p in first.series_pages}
    assert len(series) == len(PROBLEMS) + 1

    # r2's rows at 2048^3 change (its implementation got slower there): that series page and the page of its
    # group (whose comparison reads r2 and r3) are drawn; every other series page and the probe's are not
    slower = {r.implementation: r for r in make_rows("r2", ((2048,) * 3,), slowdown={SLOW: 1.5}, seed=2, n=30)}
    rows = [slower[r.implementation] if r.problem == "2048x2048x2048" else r
            for r in make_rows("r2", PROBLEMS, seed=2, n=30)]
    write_run(runs, "r2", 2, rows=rows)
    second = build_dashboard([runs], out, progress=False)
    cell = next(n for n in series if "2048x2048x2048" in n)
    assert set(second.drawn) - {"index.html"} == {f"series/{cell}", f"spec/NVIDIA_H200__{SPEC}.html"}, second.drawn

    # the probe's run is deleted: its series page, figure and group page go, nothing else is drawn or removed
    shutil.rmtree(runs / "probe")
    third = build_dashboard([runs], out, progress=False)
    probe = next(n for n in series if "512x512x512" in n)[:-len(".html")]
    assert sorted(third.removed) == sorted([f"series/{probe}.html", f"series/{probe}.png",
                                            "spec/NVIDIA_H200__probe.html"])
    assert not any((out / f).exists() for f in third.removed)
    assert set(third.drawn) <= {"index.html"}
    assert set(json.loads((out / MANIFEST).read_text())["pages"]) == {
        p.relative_to(out).as_posix() for p in third.pages}


def test_a_page_whose_file_is_gone_is_drawn_again(tmp_path):
    runs, out = three_runs(tmp_path / "runs"), tmp_path / "site"
    first = build_dashboard([runs], out, progress=False)
    png = next(out.glob("series/*.png"))
    png.unlink()
    second = build_dashboard([runs], out, progress=False)
    assert second.drawn == [f"series/{png.stem}.html"] and png.exists()
    assert len(second.unchanged) == len(first.drawn) - 1


def test_the_hash_of_rows_is_exact_and_the_codes_follows_its_sources(tmp_path):
    rows = make_rows("r1", PROBLEMS, n=30)
    df = pd.DataFrame([r.to_record() for r in rows])
    before = cell_digests(df)
    assert len(before) == len(PROBLEMS) and cell_digests(df.copy(deep=True)) == before
    df.loc[0, "median_ms"] = float(df.loc[0, "median_ms"]) * (1 + 1e-15)  # the last digit of one figure
    after = cell_digests(df)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {(df.loc[0, "contract"], df.loc[0, "problem"])}
    code = code_fingerprint()
    assert code_fingerprint(code) == code  # kept while the sources' sizes and times stand
    assert code_fingerprint({"hash": "old", "stamp": "other"})["hash"] == code["hash"]  # read again: the same
