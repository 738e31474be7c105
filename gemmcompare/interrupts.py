"""Ctrl-C, once: the first SIGINT stops what runs, later ones do not interrupt the stopping.

GNU `timeout -s INT` signals the command and then its process group, so a run it stops gets SIGINT twice
within microseconds (a user who presses Ctrl-C twice does much the same). The first KeyboardInterrupt
unwinds the run, which keeps its rows and stops its workers; a second one raised inside that unwinding,
in the middle of `queue.get`'s lock handling, left the lock broken ("RuntimeError: release unlocked lock",
a traceback instead of "interrupted", seen on the H200: fp8/study-7294a19/compile_4096/compile_fp8.log). Within
`first_interrupt_only()` the first SIGINT raises KeyboardInterrupt as before, and later ones only say that
the run is already stopping. Signals can only be handled on the main thread; elsewhere it does nothing.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

ALREADY_STOPPING = b"gemmcompare: already stopping (the rows so far are kept); waiting for the workers to end\n"


@contextmanager
def first_interrupt_only():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:  # a caller that ignores Ctrl-C (nohup, a background job) keeps doing so
        yield
        return

    def later(signum, frame):
        os.write(2, ALREADY_STOPPING)  # not print(): it may be in the middle of a print to stderr

    def first(signum, frame):
        signal.signal(signal.SIGINT, later)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
