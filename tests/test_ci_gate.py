"""examples/ci: the regression gate's compare, summary and exit code on committed runs (no GPU: the candidate
is an existing run folder), and the workflow files naming what exists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "examples" / "ci" / "gpu_regression_gate.py"
HONEST = ROOT / "experiments" / "studies" / "honest-numbers" / "h200"

pytestmark = pytest.mark.skipif(not HONEST.exists(), reason="no committed honest-numbers receipts")


def gate(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    summary = tmp_path / "github_summary.md"
    env = dict(os.environ, PYTHONPATH=str(ROOT), GITHUB_STEP_SUMMARY=str(summary))
    proc = subprocess.run([sys.executable, str(GATE), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    return proc, summary


def test_a_planted_slowdown_fails_the_gate_with_its_table_in_the_summary(tmp_path):
    out = tmp_path / "gate"
    proc, summary = gate(tmp_path, "--baseline", str(HONEST / "planted_base"), "--candidate",
                         str(HONEST / "planted_slow"), "--out", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    text = summary.read_text()
    assert text == (out / "summary.md").read_text()
    assert text.startswith("## GEMM regression gate: REGRESSED")
    slower = [line for line in text.splitlines() if line.startswith("|") and "SLOWER" in line]
    assert len(slower) == 2 and all("custom.planted_gemm" in line for line in slower)
    assert "![" not in text  # the plot is in the uploaded report, not in the summary
    assert (out / "compare" / "compare.html").exists() and (out / "report" / "report.html").exists()


def test_two_runs_of_the_same_code_pass_the_gate(tmp_path):
    proc, summary = gate(tmp_path, "--baseline", str(HONEST / "twice_1"), "--candidate", str(HONEST / "twice_2"),
                         "--out", str(tmp_path / "gate"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = summary.read_text()
    assert text.startswith("## GEMM regression gate: no regression") and "SLOWER" not in text


def test_a_missing_baseline_is_exit_2_and_no_summary(tmp_path):
    proc, summary = gate(tmp_path, "--baseline", str(tmp_path / "nope"), "--candidate", str(HONEST / "twice_2"),
                         "--out", str(tmp_path / "gate"))
    assert proc.returncode == 2 and "nope: no such run folder" in proc.stderr
    assert not summary.exists()
    proc, _ = gate(tmp_path, "--baseline", str(HONEST / "twice_1"))
    assert proc.returncode == 2 and "give --spec" in proc.stderr


def test_the_workflows_call_the_gate_with_a_spec_and_baseline_that_exist():
    gh = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    gl = yaml.safe_load((ROOT / "examples" / "ci" / "gitlab-ci.yml").read_text())
    job = gh["jobs"]["gate"]
    assert "self-hosted" in job["runs-on"] and {"push", "schedule"} <= set(gh[True])  # YAML 1.1 reads `on` as True
    gl_job = gl["gemm-regression-gate"]
    for env in (job["env"], gl_job["variables"]):
        assert (ROOT / env["SPEC"]).is_file() and (ROOT / env["BASELINE"] / "results.json").is_file()
    assert any("gpu_regression_gate.py" in step.get("run", "") for step in job["steps"])
    assert any("gpu_regression_gate.py" in line for line in gl_job["script"])
