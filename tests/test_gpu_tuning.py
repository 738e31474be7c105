"""Per-problem picks on the GPU: a tuned row races real candidates, is measured afresh, and a second run
reuses its pick (docs/tuning.md). Runs on the device machine (marker `gpu`)."""

from __future__ import annotations

import json

import pytest

from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec

pytestmark = pytest.mark.gpu

SPEC = """\
name: tuned_gpu
problems: [{m: 64, n: 1024, k: 1024}, {m: 512, n: 512, k: 512}]
contracts: [f16_f32acc_tn]
implementations:
  - library.cublas
  - mma_sync: {layout: tn, tune: {block: [[128, 128, 32], [64, 64, 64]], stages: [3, 4]}}
baseline: library.cublas
timing: {row_timeout_s: 30}
"""


def _run(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "tuned.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    return out, runner.finish_phases()


def test_a_tuned_row_passes_names_its_pick_and_is_reused_from_the_cache(tmp_path):
    first, phases = _run(tmp_path)
    tuned = [r for r in first.rows if r.implementation.startswith("mma_sync.tuned[")]
    assert first.status == "complete" and len(tuned) == 2
    for row in tuned:
        assert row.status.value == "PASS", row.reason
        assert row.params["pick"].startswith("mma_sync[") and "tuned: mma_sync[" in row.notes
        info = row.timing["tuning"]
        assert info["winner"] == row.params["pick"] and not info["cached"] and len(info["race_ms"]) >= 2
        assert row.n_samples >= 10  # the row's own measurement (the race takes 5-15 samples per candidate)
    assert phases.get("tuning_s", 0) > 0
    second, phases2 = _run(tmp_path)
    again = {r.problem: r for r in second.rows if r.implementation.startswith("mma_sync.tuned[")}
    for row in tuned:
        reused = again[row.problem]
        assert reused.status.value == "PASS" and reused.timing["tuning"]["cached"]
        assert reused.params["pick"] == row.params["pick"] and "reused from the pick cache" in reused.notes
    assert phases2.get("tuning_s", 0) == 0
    receipt = json.loads((second.run_dir / "receipt.json").read_text())
    assert "tuning_s" not in receipt["phases_s"] or receipt["phases_s"]["tuning_s"] == 0
