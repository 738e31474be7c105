"""Ctrl-C twice (gemmcompare/interrupts.py): GNU `timeout -s INT` signals a command and then its process
group, so a run gets SIGINT twice at once; the second must not break the first one's unwinding. And the
report's drawing processes leave a Ctrl-C to their caller."""

import os
import signal
import time
from pathlib import Path

import pytest

from gemmcompare.interrupts import first_interrupt_only
from gemmcompare.store import Store


def test_the_first_sigint_raises_and_later_ones_do_not(capfd):
    before = signal.getsignal(signal.SIGINT)
    caught = 0
    with first_interrupt_only():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            caught += 1
            os.kill(os.getpid(), signal.SIGINT)  # while unwinding: noted, not raised
            time.sleep(0.1)
    assert caught == 1
    assert "already stopping" in capfd.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_ctrl_c_while_a_run_stops_does_not_cut_its_stopping_short(tmp_path, monkeypatch, capfd):
    """Ctrl-C in the parent after 3 rows; a second SIGINT arrives while each GPU's worker is being stopped
    (as timeout's second signal or a user's second press does). Before, it raised there: the stopping was
    cut short (on the H200, inside queue.get's lock, into a 'release unlocked lock' traceback)."""
    import multiprocessing

    from test_scale import fake_run

    from gemmcompare.runner.gpu_session import GpuSession
    from gemmcompare.runner.parent import Runner

    emit, abort = Runner._emit, GpuSession.abort
    aborted = []

    def ctrl_c_after_three(self, row):
        emit(self, row)
        if len(self.rows) == 3:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the KeyboardInterrupt comes here, at once

    def abort_under_a_second_ctrl_c(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # where the second signal's handler runs
        abort(self)
        aborted.append(self.label)

    monkeypatch.setattr(Runner, "_emit", ctrl_c_after_three)
    monkeypatch.setattr(GpuSession, "abort", abort_under_a_second_ctrl_c)
    out = fake_run(tmp_path, monkeypatch, gpus="all")
    assert out.status == "interrupted" and len(out.rows) == 3
    assert len(aborted) == 2  # both GPUs' workers were stopped, the second signal notwithstanding
    assert not multiprocessing.active_children()
    assert "already stopping" in capfd.readouterr().err
    assert Store(tmp_path / "run.db").find_run("latest")["status"] == "interrupted"


def _sigint_disposition() -> str:
    return str(signal.getsignal(signal.SIGINT))


def test_the_reports_drawing_processes_ignore_ctrl_c():
    from gemmcompare.report import rendering

    rendering.shutdown()  # a pool of an earlier test: start a fresh one
    if not rendering.prestart(workers=2):
        pytest.skip("no forkserver here")
    try:
        seen = {rendering._pool.submit(_sigint_disposition).result(timeout=60) for _ in range(8)}
        assert seen == {str(signal.SIG_IGN)}, seen
    finally:
        rendering.shutdown()
