"""Build child processes (build/processes.py): results come back in the order they finish, a failure comes
back as ChildFailed, and a child whose parent is gone leaves quietly. Seen on the H200: when `timeout` killed
`gemmcompare build`, each build child that finished afterwards printed a BrokenPipeError traceback into the
build log (experiments/studies/llm-shapes/h200/partial-4e01d11/build.log)."""

import math
import subprocess
import sys
import textwrap
from pathlib import Path

from gemmcompare.build.processes import ChildFailed, run_children

ROOT = Path(__file__).resolve().parents[1]

# A build child whose pipe has no reader left (its parent was killed) by the time its call returns.
ORPHAN = textwrap.dedent("""
    import multiprocessing, sys, time
    from gemmcompare.build.processes import _child

    if __name__ == "__main__":
        ctx = multiprocessing.get_context("spawn")
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(send, time.sleep, (1.0,)))
        proc.start()
        send.close()
        receive.close()  # as a killed parent's end closes: the child's send finds no reader
        proc.join(60)
        sys.exit(proc.exitcode)
""")


def test_a_child_whose_parent_is_gone_leaves_without_a_traceback(tmp_path):
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr


def test_children_send_back_results_and_failures():
    got = {}
    run_children([(math.sqrt, (4.0,)), (math.sqrt, (-1.0,)), (math.factorial, (5,))], workers=2,
                 on_result=lambda index, value: got.__setitem__(index, value))
    assert got[0] == 2.0 and got[2] == 120
    assert isinstance(got[1], ChildFailed) and "math domain error" in got[1].message
