"""experiments/studies/llm-shapes/llm_shapes_picks.py: the table of which candidate won which problem, read from run folders."""

import json

from experiment_scripts import EXPERIMENTS, load_script

picks = load_script("studies/llm-shapes/llm_shapes_picks.py")
RECEIPT = EXPERIMENTS / "studies" / "llm-shapes" / "h200" / "study-e7588f0" / "runs"


def _folder(tmp_path, name, rows):
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.json").write_text(json.dumps({"receipt": {}, "results": rows}))
    return str(tmp_path / name)


def _row(m, winner, race, cached):
    return {"m": m, "n": 8, "k": 8, "family": "decode", "status": "PASS",
            "timing": {"tuning": {"winner": winner, "race_ms": race, "excluded": {}, "cached": cached}}}


def test_a_fresh_race_counts_once_and_before_a_cached_one(tmp_path):
    a = _folder(tmp_path, "a", [_row(1, "x", {"x": 1.0, "y": 1.02}, cached=True)])
    b = _folder(tmp_path, "b", [_row(1, "y", {"x": 1.1, "y": 1.0}, cached=False), _row(2, "x", {"x": 1.0, "y": 1.5},
                                                                                        cached=False)])
    got = picks.races([a, b])["decode"]
    assert sorted(got) == [(1, 8, 8), (2, 8, 8)]
    assert got[(1, 8, 8)]["winner"] == "y"  # the fresh race, not the cached copy read first


def test_the_study_receipt_names_its_winners_and_near_misses(capsys):
    """The committed study (both merged runs): every problem's race is counted once per family; the winners
    its README and the 70B QKV probe name are there (the swapped stream-K kernel at 1x/16x10240x8192)."""
    picks.main(sorted(str(p) for p in RECEIPT.iterdir()))
    out = capsys.readouterr().out
    assert "## cutlass (48 problems raced)" in out and "## decode (16 problems raced)" in out
    assert "## gemv (8 problems raced)" in out  # the M = 1 problems only
    line = next(l for l in out.splitlines() if l.startswith("| sm90_coop_swapab_streamk_128x16x128_c1x1 |"))
    assert line.startswith("| sm90_coop_swapab_streamk_128x16x128_c1x1 | 2: 1x10240x8192, 16x10240x8192 |")
    # a candidate that lost every race by more than 3% says so, and the raced counts are per problem
    assert "| sm90_coop_streamk_sk_128x128x64_c1x1 | 0: - | 0: - | 48 | - |" in out
