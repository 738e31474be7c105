"""The SQLite store (embedded, no server): a runs table and an append-only results table.

Rows are written as they are produced and committed at once, so a crash loses nothing already measured
and `run --resume RUN` can skip what is done. Reading goes through pandas.

Commands that only read (report, compare, history) open a store with `Store.open_read`: SQLite's
read-only mode, after checking that the file is an SQLite database with the tables and columns a store
has, so that a wrong or damaged file is an InputError (exit 2) naming it, and is never created, changed
or given tables by a read.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
import sqlite3
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..lazy import LazyModule
from ..results import COLUMNS, JSON_COLUMNS, Result

pd = LazyModule("pandas")  # the store's readers need pandas; `build` and a run's start do not

_SQL_TYPES = {int: "INTEGER", float: "REAL", bool: "INTEGER", str: "TEXT"}

def new_run_id() -> str:
    """A new run's id: when it started (ids sort by time) and six random hex digits (runs of one second)."""
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


RUN_COLUMNS = [
    "run_id", "name", "spec_path", "spec_hash", "status", "started_at", "finished_at", "gpu", "cc",
    "git_commit", "git_dirty", "gemmcompare_version", "run_dir", "receipt", "spec_text",
]


def _result_column_types() -> dict[str, str]:
    types = {}
    for name, f in Result.__dataclass_fields__.items():
        t = f.type if isinstance(f.type, type) else None
        text = str(f.type)
        if name in JSON_COLUMNS:
            types[name] = "TEXT"
        elif t in _SQL_TYPES:
            types[name] = _SQL_TYPES[t]
        elif "float" in text:
            types[name] = "REAL"
        elif "int" in text or "bool" in text:
            types[name] = "INTEGER"
        else:
            types[name] = "TEXT"
    return types


SQLITE_HEADER = b"SQLite format 3\x00"
RESULT_KEY_COLUMNS = ("run_id", "problem", "contract", "implementation", "status")  # what every reader needs


# The connections this process holds, by file. POSIX advisory locks belong to a process and a file: a
# close() of *any* descriptor of the file drops every lock this process's SQLite connections hold on it,
# and another process may then take the store for its last user, checkpoint and delete the WAL under
# them: a corrupt store (sqlite.org/howtocorrupt.html, 2.2). So the file itself is read (its header)
# only while this process has no connection to it, and every Store closes its connection when it goes.
_OPEN_CONNECTIONS: collections.Counter[str] = collections.Counter()


def _file_key(path: Path) -> str:
    return os.path.realpath(path)


def _held_here(path: Path) -> bool:
    """Whether this process has a connection open to the store at `path`."""
    return _OPEN_CONNECTIONS[_file_key(path)] > 0


class Store:
    """One SQLite file holding many runs. Safe to open from several processes (SQLite locking). Close it
    (or use it as a context manager); one that is dropped closes its connection then."""

    conn: sqlite3.Connection | None = None
    _key: str | None = None

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        # A file that is no store (or another version's) is an error, not a crash mid-run. A zero-length file
        # is an empty database to SQLite, and what a run in another process has just created and not yet
        # written: opened to add to, it is a new store (reading one stays an error: it holds no run).
        if self.path.exists() and not _zero_length_file(self.path):
            _check_existing(self.path, full=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._attach(sqlite3.connect(str(self.path), timeout=60))
            self.conn.execute("PRAGMA journal_mode=WAL")
            self._create()
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise InputError(f"cannot write the store {self.path}: {exc}") from None
        self.run_columns = list(RUN_COLUMNS)

    def _attach(self, conn: sqlite3.Connection) -> None:
        # sqlite3.Connection is in a reference cycle with its statement cache: only close() (or the cyclic
        # garbage collector, at an unknown time) releases its file descriptors and locks
        self.conn, self._key = conn, _file_key(self.path)
        _OPEN_CONNECTIONS[self._key] += 1

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
            _OPEN_CONNECTIONS[self._key] -= 1

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: nothing left to release
            pass

    @classmethod
    def open_read(cls, path: str | os.PathLike) -> "Store":
        """An existing store, opened read-only after checking what it is; InputError (exit 2) naming the
        file and the problem otherwise. Nothing on disk is created or changed."""
        store = cls.__new__(cls)
        store.path = Path(path)
        _check_store_file(store.path)
        store._attach(_read_only_connection(store.path))
        try:
            store.run_columns = _check_schema(store.path, store.conn, full=False)
        except BaseException:
            store.close()
            raise
        return store

    @staticmethod
    def check_writable(path: str | os.PathLike) -> None:
        """Before a run does any work: that `path` is a store it can add to, or a new file it can create."""
        path = Path(path)
        if path.exists():
            _check_existing(path, full=True)
            where = path
        else:
            where = next((p for p in path.absolute().parents if p.exists()), Path("/"))
            if not where.is_dir():
                raise InputError(f"cannot create the store {path}: {where} is not a folder")
        if not os.access(where, os.W_OK) or not os.access(path.absolute().parent if path.exists() else where, os.W_OK):
            raise InputError(f"cannot write the store {path}: {where} is not writable (--store names another)")

    def _create(self):
        run_cols = ", ".join(f"{c} TEXT" if c != "run_id" else "run_id TEXT PRIMARY KEY" for c in RUN_COLUMNS)
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS runs ({run_cols})")
        types = _result_column_types()
        cols = ", ".join(f"{c} {types[c]}" for c in COLUMNS)
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS results (row_id INTEGER PRIMARY KEY AUTOINCREMENT, {cols})")
        # A store made by an older gemmcompare lacks the columns added since: add them (empty for old rows).
        have = {r[1] for r in self.conn.execute("PRAGMA table_info(results)")}
        for c in COLUMNS:
            if c not in have:
                self.conn.execute(f"ALTER TABLE results ADD COLUMN {c} {types[c]}")
        self.conn.execute("CREATE INDEX IF NOT EXISTS results_run ON results(run_id)")
        self.conn.commit()

    # -- writing -----------------------------------------------------------------------------------
    def create_run(self, run: dict[str, Any]) -> None:
        rec = {c: run.get(c) for c in RUN_COLUMNS}
        rec["receipt"] = json.dumps(rec["receipt"]) if not isinstance(rec["receipt"], str) else rec["receipt"]
        rec["git_dirty"] = None if rec["git_dirty"] is None else str(rec["git_dirty"])
        placeholders = ", ".join("?" for _ in RUN_COLUMNS)
        self.conn.execute(f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({placeholders})",
                          [rec[c] for c in RUN_COLUMNS])
        self.conn.commit()

    def set_run_status(self, run_id: str, status: str, finished_at: str | None = None) -> None:
        self.conn.execute("UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?", (status, finished_at, run_id))
        self.conn.commit()

    def set_run_receipt(self, run_id: str, receipt: dict[str, Any]) -> None:
        """Replace a run's receipt (the GPUs a run measured on are known only once their workers start)."""
        self.conn.execute("UPDATE runs SET receipt = ? WHERE run_id = ?", (json.dumps(receipt, default=str), run_id))
        self.conn.commit()

    def add_result(self, result: Result) -> None:
        self.add_results([result])

    def add_results(self, results: Iterable[Result]) -> None:
        """Insert rows in one transaction (a run adds its rows one at a time, as they are measured; a merge
        adds a whole source at once)."""
        placeholders = ", ".join("?" for _ in COLUMNS)
        self.conn.executemany(f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                              ([rec[c] for c in COLUMNS] for rec in (r.to_record() for r in results)))
        self.conn.commit()

    # -- reading -----------------------------------------------------------------------------------
    def run(self, run_id: str) -> dict[str, Any] | None:
        cur = self.conn.execute(f"SELECT {', '.join(self.run_columns)} FROM runs WHERE run_id = ?", (run_id,))
        row = cur.fetchone()
        if row is None:
            return None
        rec = dict.fromkeys(RUN_COLUMNS)  # columns an older store lacks read as None
        rec.update(zip(self.run_columns, row))
        try:
            receipt = json.loads(rec["receipt"]) if rec["receipt"] else {}
        except (TypeError, ValueError):
            receipt = None
        if not isinstance(receipt, dict):
            raise InputError(f"the store {self.path}: the receipt of run {run_id} is not a JSON mapping")
        rec["receipt"] = receipt
        return rec

    def find_run(self, prefix: str) -> dict[str, Any] | None:
        """A run by id or unique id prefix, or 'latest'."""
        if prefix == "latest":
            cur = self.conn.execute("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
        else:  # a prefix, literally: with LIKE, '_' and '%' in it would be wildcards
            cur = self.conn.execute("SELECT run_id FROM runs WHERE substr(run_id, 1, ?) = ? ORDER BY started_at",
                                    (len(prefix), prefix))
        ids = [r[0] for r in cur.fetchall()]
        return self.run(ids[-1]) if len(ids) == 1 or (prefix == "latest" and ids) else None

    def runs(self) -> pd.DataFrame:
        cols = [c for c in self.run_columns if c not in ('spec_text', 'receipt')]
        return pd.read_sql_query(f"SELECT {', '.join(cols)} FROM runs ORDER BY started_at", self.conn)

    def results(self, run_id: str | None = None, decode: bool = True) -> pd.DataFrame:
        """Result rows (every run, or one), JSON columns decoded into Python objects."""
        query, args = "SELECT * FROM results", ()
        if run_id is not None:
            query, args = "SELECT * FROM results WHERE run_id = ? ORDER BY row_id", (run_id,)
        df = pd.read_sql_query(query, self.conn, params=args)
        if decode and len(df):
            for col in JSON_COLUMNS:
                if col in df:  # a store from before a JSON column was added (opened read-only) lacks it
                    df[col] = df[col].map(lambda v: json.loads(v) if isinstance(v, str) else v)
        return df

    def done_keys(self, run_id: str) -> set[tuple[str, str, str]]:
        """(problem, contract, implementation) of the rows a run already has, for --resume."""
        cur = self.conn.execute("SELECT problem, contract, implementation FROM results WHERE run_id = ?", (run_id,))
        return {tuple(r) for r in cur.fetchall()}


# -- checking a file before it is used as a store ------------------------------------------------------

def read_header(path: Path, size: int) -> bytes | None:
    """The first `size` bytes of the file, or None while this process holds a connection to it (reading
    would drop that connection's locks: see _OPEN_CONNECTIONS). OSError when it cannot be read."""
    if _held_here(path):
        return None
    with open(path, "rb") as f:
        return f.read(size)


def is_sqlite_file(path: Path) -> bool:
    """Whether the file starts as an SQLite database does (a store this process holds open is one)."""
    try:
        head = read_header(path, len(SQLITE_HEADER))
    except OSError:
        return False
    return head is None or head == SQLITE_HEADER


def _zero_length_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size == 0
    except OSError:
        return False


def _check_store_file(path: Path) -> None:
    """That `path` is a file that starts as an SQLite database does (no connection is opened yet; a file
    this process already has open was checked when it was opened)."""
    if path.is_dir():
        raise InputError(f"the store {path} is a folder, not an SQLite file (--store names the file)")
    try:
        head = read_header(path, len(SQLITE_HEADER))
    except OSError as exc:
        raise InputError(f"cannot read the store {path}: {exc.strerror or exc}") from None
    if head is None:
        return
    if not head:
        raise InputError(f"the store {path} is an empty file, not an SQLite database")
    if head != SQLITE_HEADER:
        raise InputError(f"the store {path} is not an SQLite database (it does not start as one)")


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that cannot write. A WAL store that no process has open (no -wal file beside it) is
    opened as immutable: in plain read-only mode SQLite would create its -wal and -shm files, and a read
    must leave the folder as it found it. (A writer that starts meanwhile writes to a new WAL, not to the
    file read here.)"""
    try:
        header = read_header(path, 20)
    except OSError as exc:
        raise InputError(f"cannot read the store {path}: {exc.strerror or exc}") from None
    wal = header is not None and len(header) == 20 and header[18] == 2
    quiet = wal and not Path(f"{path}-wal").exists()  # (held here: never quiet, and never immutable)
    uri = "file:" + urllib.parse.quote(str(path.absolute())) + ("?mode=ro&immutable=1" if quiet else "?mode=ro")
    try:
        return sqlite3.connect(uri, uri=True, timeout=60)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open the store {path}: {exc}") from None


def _check_existing(path: Path, full: bool) -> None:
    _check_store_file(path)
    conn = _read_only_connection(path)
    try:
        _check_schema(path, conn, full)
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _check_schema(path: Path, conn: sqlite3.Connection, full: bool) -> list[str]:
    """The runs table's columns, after checking that both tables are there with the columns readers need.
    For a store a run will add to (`full`), a missing table is created and result columns added since the
    store was made are added (by _create), but an existing runs table needs every column."""
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing_tables = [t for t in ("runs", "results") if t not in tables]
        if missing_tables and not full:
            raise InputError(f"the store {path} has no {' and no '.join(missing_tables)} table: not a gemmcompare "
                             f"store, or a damaged one")
        run_cols = _columns(conn, "runs") if "runs" in tables else list(RUN_COLUMNS)
        result_cols = _columns(conn, "results") if "results" in tables else list(COLUMNS)
    except sqlite3.Error as exc:
        raise InputError(f"cannot read the store {path}: {exc}") from None
    need_runs = RUN_COLUMNS if full else ["run_id", "started_at"]
    need_results = list(RESULT_KEY_COLUMNS)
    for table, have, need in (("runs", run_cols, need_runs), ("results", result_cols, need_results)):
        lacking = [c for c in need if c not in have]
        if lacking:
            raise InputError(f"the store {path}: its {table} table lacks the column(s) {lacking[:8]}"
                             f"{' ...' if len(lacking) > 8 else ''} (a damaged store, or one from another version of "
                             f"gemmcompare{'; --store names a new one' if full else ''})")
    return [c for c in RUN_COLUMNS if c in run_cols]
