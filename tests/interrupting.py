"""Ctrl-C for a run in another process, once its first rows are in the store (tests of interrupted runs)."""

import signal
import time
from pathlib import Path

from gemmcompare.store import Store


def interrupt_once_rows_land(proc, store: Path, rows: int = 2, timeout_s: float = 300, poll_s: float = 0.2) -> dict:
    """Read the store the way a notebook or a watcher would while the run writes it; once it holds `rows`
    rows, send SIGINT and wait for the run to exit. Returns the run as the store then has it, with the exit
    code (`exit`) and the rows it kept (`kept`)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if store.exists() and len(Store(store).results()) >= rows:
            break
        time.sleep(poll_s)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=120)
    run = Store(store).find_run("latest")
    return {**run, "exit": code, "kept": len(Store(store).results(run["run_id"]))}
