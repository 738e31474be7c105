"""Resumable runs and a clean Ctrl-C (GPU)."""

import subprocess
import sys
from pathlib import Path

import pytest

from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gemmcompare.store import Store
from interrupting import interrupt_once_rows_land

pytestmark = pytest.mark.gpu

SPEC = """\
name: resume
problems:
  - sweep: {m: [256, 512, 1024, 2048], n: "=m", k: "=m"}
contracts: [f16_f32acc_tn]
implementations: [library.cublas, library.torch_matmul]
baseline: library.cublas
timing: {samples: {min: 10, max: 30}}
"""


def test_resume_runs_only_the_missing_rows(tmp_path):
    import sqlite3

    exp = parse_spec(SPEC, str(tmp_path / "resume.yaml"))
    opts = RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)
    first = Runner(exp, opts).run()
    assert len(first.rows) == 8
    with sqlite3.connect(tmp_path / "g.db") as db:  # as if the run had died before torch.mm's rows
        db.execute("DELETE FROM results WHERE implementation = 'library.torch_matmul'")
    opts.resume = first.run_id
    second = Runner(exp, opts).run()
    assert second.run_id == first.run_id and second.status == "complete"
    assert sorted(r.implementation for r in second.rows) == ["library.torch_matmul"] * 4
    df = Store(tmp_path / "g.db").results(first.run_id)
    assert len(df) == 8 and df.groupby(["problem", "implementation"]).size().max() == 1


def test_ctrl_c_keeps_finished_rows_and_marks_the_run(tmp_path):
    spec = tmp_path / "resume.yaml"
    spec.write_text(SPEC.replace("[256, 512, 1024, 2048]", "[256, 512, 1024, 2048, 4096, 8192]"))
    cmd = [sys.executable, "-m", "gemmcompare", "run", str(spec), "--store", str(tmp_path / "g.db"),
           "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--no-report"]
    store_path = tmp_path / "g.db"
    run = interrupt_once_rows_land(subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1]), store_path)
    assert run["exit"] == 130 and run["status"] == "interrupted"
    assert 2 <= run["kept"] < 12
    done = subprocess.run(cmd + ["--resume", run["run_id"]], cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0
    assert len(Store(store_path).results(run["run_id"])) == 12
