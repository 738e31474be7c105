"""The measuring worker leaves by os._exit: whatever it made that only a finalizer releases must not be
reported as leaked into the run's output (seen on the H200 in every run with a torch.compile row)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import io, multiprocessing, os, sys
    from gemmcompare.runner.worker import thread_lock_for_progress_bars

    def child(guard):
        if guard:
            thread_lock_for_progress_bars()
        from tqdm import tqdm
        for _ in tqdm(range(3), file=io.StringIO()):  # what torch inductor does while it compiles
            pass
        os._exit(0)  # as worker_main leaves

    if __name__ == "__main__":
        proc = multiprocessing.get_context("spawn").Process(target=child, args=(sys.argv[1] == "guard",))
        proc.start()
        proc.join()
        sys.exit(proc.exitcode)
""")


@pytest.mark.parametrize("guard", ["guard", "none"])
def test_a_worker_that_drew_a_progress_bar_leaves_no_leaked_semaphore_warning(guard, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = subprocess.run([sys.executable, str(script), guard], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    # without the guard the warning is there: the check can see what it is looking for
    assert ("leaked semaphore" in out.stderr) == (guard == "none"), out.stderr
