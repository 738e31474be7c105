"""The pick cache: a tuned row's winner per (GPU model, driver, problem, contract, build), in SQLite.

A pick is only as good as what it was raced on: another GPU model, another driver (its compiler and
scheduling change kernels' speeds), another problem or contract, or another build of any candidate (a
changed kernel, compiler or flags: the module names carry a hash of all of it) is another key. The file
lives beside the build cache (GEMMCOMPARE_CACHE_DIR or ~/.cache/gemmcompare), one per user, shared by
runs and workers (WAL, a busy timeout).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import sqlite3
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..build.cache_entry import default_cache_dir
from .select import Pick

FILE = "picks.sqlite"
SCHEMA = """CREATE TABLE IF NOT EXISTS picks (
  key TEXT PRIMARY KEY, gpu TEXT, driver TEXT, problem TEXT, contract TEXT, tuned TEXT,
  winner TEXT, pick TEXT, tuned_at REAL)"""


def pick_key(*, gpu: str, cc: str, driver: str | None, problem: dict[str, Any], contract: dict[str, Any],
             tuned: str, builds: dict[str, str], l2: str) -> str:
    """The cache key: a hash of everything a pick depends on. `builds` maps each raced candidate to its
    build's identity (the extension's module name, which hashes its sources, compiler and flags); `l2` is the
    timing contract's L2 policy the race ran under (a memory-bound winner under a flushed L2 need not win
    under a clean one: llm-shapes/gemv-probe-*)."""
    blob = json.dumps({"gpu": gpu, "cc": cc, "driver": driver, "problem": problem, "contract": contract,
                       "tuned": tuned, "builds": dict(sorted(builds.items())), "l2": l2},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class PickCache:
    def __init__(self, directory: Path | None = None):
        self.path = Path(directory or default_cache_dir()) / FILE

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(SCHEMA)
        return db

    @contextmanager
    def _transaction(self):
        """A connection for one transaction, closed after it: the last connection's close moves the WAL into the
        file, so a copy of picks.sqlite made next (a device call's, a receipt's) holds every pick."""
        db = self._connect()
        try:
            with db:
                yield db
        finally:
            db.close()

    def get(self, key: str) -> Pick | None:
        try:
            with self._transaction() as db:
                row = db.execute("SELECT pick FROM picks WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None  # an unreadable cache is an empty one: the row tunes again
        if row is None:
            return None
        try:
            # the oracle's times were that run's measurements, not this one's: a reused pick carries none
            return Pick.from_dict(json.loads(row[0]), cached=True, oracle_ms={}, oracle_ci_rel={})
        except (TypeError, ValueError):
            return None

    def merge(self, other: Path) -> int:
        """Add the picks of another cache file (an earlier device call's picks.sqlite, or a receipt's
        picks.sqlite.xz) that this one lacks; a key both hold keeps this cache's pick. Returns how many were
        added. A file that is not a pick cache is an error naming it (OSError), not a silent empty merge."""
        other = Path(other)
        if not other.is_file():
            raise OSError(f"{other}: no such pick cache file")
        if other.suffix == ".xz":
            # a receipt keeps its picks compressed (a study rerun on its pick cache in a later session, on
            # another machine: .picks/ is git-ignored and does not travel); SQLite attaches a plain file only
            with tempfile.TemporaryDirectory() as tmp:
                plain = Path(tmp) / other.stem
                try:
                    plain.write_bytes(lzma.decompress(other.read_bytes()))
                except lzma.LZMAError as e:
                    raise OSError(f"{other}: not a pick cache ({e})") from None
                return self._merge_plain(plain, named=other)
        return self._merge_plain(other, named=other)

    def _merge_plain(self, other: Path, named: Path) -> int:
        db = self._connect()
        try:
            db.execute("ATTACH DATABASE ? AS other", (str(other),))
            try:
                added = db.execute("INSERT OR IGNORE INTO picks SELECT * FROM other.picks").rowcount
                db.commit()
            finally:
                db.execute("DETACH DATABASE other")
        except sqlite3.Error as e:
            raise OSError(f"{named}: not a pick cache ({e})") from None
        finally:
            db.close()
        return added

    def put(self, key: str, pick: Pick, *, gpu: str, driver: str | None, problem: str, contract: str,
            tuned: str) -> None:
        try:
            with self._transaction() as db:
                db.execute("INSERT OR REPLACE INTO picks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (key, gpu, driver, problem, contract, tuned, pick.winner,
                            json.dumps({**pick.as_dict(), "cached": False}), time.time()))
        except sqlite3.Error:
            pass  # a cache that cannot be written costs the next run its tuning time, nothing else
