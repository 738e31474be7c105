"""The dashboard groups runs by spec and purpose: a probe or a narrowed run that shares a spec name is its own
series and never stands in for the spec's last full run; `run` records its narrowing in the receipt."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from gemmcompare.cli import main
from gemmcompare.dashboard import build_dashboard
from gemmcompare.dashboard.purpose import group_runs
from gemmcompare.dashboard.runs import find_runs
from gemmcompare.dashboard.steps import latest_comparison
from gemmcompare.plan import narrow
from gemmcompare.spec import load_spec
from test_dashboard import SLOW
from test_dashboard_incremental import SPEC, write_run
from test_first_answer import RUN_SPEC, _fake_cli
from test_report import BASELINE

ROOT = Path(__file__).resolve().parents[1]
PART = ((2048,) * 3,)


def _cell(index: str, purpose: str) -> str:
    """The text of the index's (spec, purpose) row's cell for the one GPU."""
    row = re.search(rf"<td class='text'>{SPEC}</td><td class='text'>{re.escape(purpose)}</td><td[^>]*>(.*?)</td>",
                    index)
    assert row, purpose
    return row.group(1)


def test_a_probe_sharing_the_spec_name_is_its_own_group_and_leaves_the_studys_verdict(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "full1", 1)
    write_run(runs, "full2", 2, slowdown={SLOW: 1.2})
    write_run(runs, "probe", 3, problems=PART, impls={BASELINE, SLOW})  # later, one shape, two kernels
    found = find_runs([runs])
    groups = {g.label: [r.run_id for r in g.runs] for g in group_runs(found)}
    assert groups.pop("main") == ["full1", "full2"]
    ((label, members),) = groups.items()
    assert members == ["probe"]
    assert label == "part: 2 implementations × 1 problem (2048x2048x2048) × 1 contract, L2 flush"

    d = build_dashboard([runs], tmp_path / "site", progress=False)
    index = d.index.read_text()
    by_id = {r.run_id: r for r in found}
    expected = latest_comparison([by_id["full1"], by_id["full2"]]).counts
    main_cell = _cell(index, "main")
    assert ", ".join(f"{n} {v}" for v, n in expected.items()) in main_cell and "GONE" not in main_cell
    assert expected.get("SLOWER") == 3  # the planted step, at each problem
    assert "first run: nothing to compare with" in _cell(index, label)
    page = (d.out / "spec" / "NVIDIA_H200__study.html").read_text()
    assert "2 runs of spec study" in page and html.escape(label) in page  # the main page links the probe's


def test_a_narrowed_run_is_never_the_main_series_and_a_full_run_continues_the_main(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "full1", 1)
    # narrowed to the spec's own rows (so its coverage alone would not tell it apart), then a full run again
    write_run(runs, "only", 2, narrowed={"only": "cublas|mma"})
    write_run(runs, "full3", 3)
    write_run(runs, "l2", 4, problems=PART, timing={"method": "cuda_events", "l2": "evict"})
    groups = {g.label: [r.run_id for r in g.runs] for g in group_runs(find_runs([runs]))}
    assert groups["main"] == ["full1", "full3"]
    assert groups["narrowed: 8 implementations × 3 problems × 1 contract, L2 flush, --only cublas|mma"] == ["only"]
    assert groups["other: 8 implementations × 1 problem (2048x2048x2048) × 1 contract, L2 evict"] == ["l2"]


def test_a_run_that_measured_more_continues_the_series_and_one_of_other_shapes_does_not(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "small", 1, problems=PART)
    write_run(runs, "grown", 2)  # the spec grew: it measured everything the last run did, and more
    write_run(runs, "again", 3)
    write_run(runs, "other", 4, problems=((512,) * 3,))
    groups = {g.label: [r.run_id for r in g.runs] for g in group_runs(find_runs([runs]))}
    assert groups.pop("main") == ["small", "grown", "again"]
    assert list(groups.values()) == [["other"]] and next(iter(groups)).startswith("other: ")


def test_narrow_records_what_it_narrowed_and_a_run_writes_it_in_its_receipt(tmp_path, monkeypatch, capsys):
    spec = ROOT / "experiments" / "quickstart.yaml"
    assert load_spec(spec).narrowed == () and narrow(load_spec(spec)).narrowed == ()
    assert narrow(load_spec(spec), l2="flush").narrowed == ()  # the spec's own policy narrows nothing
    assert dict(narrow(load_spec(spec), "64x64x64", True, "cublas", l2="evict").narrowed) == {
        "shapes": "64x64x64", "check_only": "true", "only": "cublas", "l2": "evict"}
    path = tmp_path / "spec.yaml"
    path.write_text(RUN_SPEC)
    _fake_cli(monkeypatch)
    for extra in ([], ["--l2", "evict"]):
        assert main(["run", str(path), *extra, "--store", str(tmp_path / "g.db"), "--runs-dir", str(tmp_path / "runs"),
                     "--no-progress", "--no-report"]) == 0, capsys.readouterr().out
    receipts = [json.loads(p.read_text()) for p in sorted((tmp_path / "runs").glob("*/receipt.json"))]
    assert sorted(json.dumps(r["narrowed"]) for r in receipts) == ["{\"l2\": \"evict\"}", "{}"]
