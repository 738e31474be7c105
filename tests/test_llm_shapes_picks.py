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


def test_the_partial_receipt_names_its_winners_and_near_misses(capsys):
    picks.main(sorted(str(p) for p in RECEIPT.iterdir()))
    out = capsys.readouterr().out
    assert "## cutlass (26 problems raced)" in out and "## decode (10 problems raced)" in out
    line = next(l for l in out.splitlines() if l.startswith("| sm90_pp_64x64x64_c1x1 |"))
    assert line.startswith("| sm90_pp_64x64x64_c1x1 | 10: 1x4096x4096,")
    # splitk4 lost every race but one by more than 3%: 1x4096x14336, 0.8% behind
    assert "| sm90_coop_splitk4_128x128x64_c1x1 | 0: - | 1: 1x4096x14336 (+0.8%) |" in out
    # candidates the trimmed spec no longer lists keep their short names
    assert "| cols 64 unroll 2 splits 8 |" in out and "| sm90_coop_splitk16_128x128x64_c1x1 |" in out
