"""experiments/studies/llm-shapes/llm_shapes_both_l2.py: the study under two L2 policies against issue 43's goals,
read from committed receipts (the flushed study and the evicted decode runs)."""

from experiment_scripts import EXPERIMENTS, load_script

both = load_script("studies/llm-shapes/llm_shapes_both_l2.py")
H200 = EXPERIMENTS / "studies" / "llm-shapes" / "h200"
FLUSH = f"flush={H200 / 'study-e7588f0' / 'runs' / 'merged-run1'}:{H200 / 'study-e7588f0' / 'runs' / 'merged-run2'}"
EVICT_RUN = next((H200 / "decode-evict-b7eb13e" / "runs").iterdir())


def test_both_policies_side_by_side_with_each_goal(capsys):
    both.main([FLUSH, f"evict={EVICT_RUN}:-"])
    out = capsys.readouterr().out
    assert out.startswith("| problem | flush: cuBLAS us | flush: CUTLASS % | flush: best hand-written % (which) | "
                          "evict: cuBLAS us |")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "x" in line.split("|")[1]]
    assert len(rows) == 48  # every problem of the study; the evicted run has the 32 decode ones
    assert sum("not reached" in line for line in rows) == 16
    # the committed numbers (study-e7588f0's README, decode-evict-b7eb13e's) against the new goals
    assert "- flush: tuned CUTLASS >= 97% everywhere: NOT met (min 95.7%;" in out
    assert "geometric mean 101.0% (met: goal 100%)" in out
    assert "- flush: rerun on the pick cache: 95 of 96 goal rows within 3 points (NOT met;" in out
    assert "- evict: tuned CUTLASS >= 97% everywhere: NOT met (min 91.0%; below: " in out
    assert "16x10240x8192 91.0" in out
    assert "- evict: best hand-written >= 95% at prefill: no problems; >= 90% at decode: NOT met (min 82.3%;" in out
    assert "- evict: no rerun on the pick cache" in out


def test_a_malformed_argument_says_what_it_wants():
    import pytest

    with pytest.raises(SystemExit, match="is not POLICY=RUN1:RUN2"):
        both.parse("flush=only-one-run")
