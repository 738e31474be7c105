"""A store read while a run writes it, the run interrupted and resumed, stays whole.

A Store used to leave its SQLite connection open until the garbage collector found it (the connection
is in a reference cycle with its statement cache), and every Store() read the file's header with a plain
open()/close(): that close dropped the POSIX locks of the connections the process still held, so the
run's process took itself for the last user, checkpointed and deleted the WAL under them, and the resumed
run's rows landed in a store SQLite then called malformed (seen on the H200: tests/test_gpu_resume.py).
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gemmcompare.store import Store
from interrupting import interrupt_once_rows_land
from gemmcompare.store.database import read_header

RUNNER = Path(__file__).resolve().parent / "fake_run_process.py"


def _descriptors_of(folder: Path) -> list[str]:
    fd_dir = Path("/proc/self/fd")
    out = []
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)):
            out.append(target)
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_a_store_releases_its_file_when_closed_or_dropped(tmp_path):
    path = tmp_path / "g.db"
    Store(path).results()
    assert _descriptors_of(tmp_path) == []  # dropped: closed at once, not when the collector runs
    with Store(path) as store:
        store.results()
        assert read_header(path, 16) is None  # held here: the header is not read (its close would drop the locks)
    assert _descriptors_of(tmp_path) == [] and read_header(path, 16) == b"SQLite format 3\x00"
    reader = Store.open_read(path)
    reader.close()
    reader.close()  # twice: nothing
    assert _descriptors_of(tmp_path) == []


def test_a_store_polled_during_an_interrupted_and_resumed_run_stays_whole(tmp_path):
    store = tmp_path / "g.db"
    cmd = [sys.executable, str(RUNNER), str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(RUNNER.parent), str(RUNNER.parents[1])])}
    run = interrupt_once_rows_land(subprocess.Popen(cmd, env=env), store, timeout_s=120)
    assert run["exit"] == 130 and run["status"] == "interrupted"
    assert 2 <= run["kept"] < 12
    assert subprocess.run(cmd + [run["run_id"]], env=env, timeout=120).returncode == 0
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert len(Store(store).results(run["run_id"])) == 12


def test_a_zero_length_store_just_created_by_a_run_opens_as_a_new_store(tmp_path):
    """sqlite3.connect creates the file empty and writes its header with the first transaction; a reader
    polling meanwhile (tests/interrupting.py on the H200, 5e0c0c8) found the zero-length file and was told
    it is no SQLite database. Opened to add to, it is a new store; opened only to read, still an error."""
    from gemmcompare.errors import InputError

    path = tmp_path / "g.db"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        Store.open_read(path)
    with Store(path) as store:
        assert len(store.results()) == 0
    assert read_header(path, 16) == b"SQLite format 3\x00"
