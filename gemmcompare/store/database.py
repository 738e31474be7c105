"""The SQLite store (embedded, no server): a runs table and an append-only results table.

Rows are written as they are produced and committed at once, so a crash loses nothing already measured
and `run --resume RUN` can skip what is done. Reading goes through pandas.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from ..results import COLUMNS, JSON_COLUMNS, Result

_SQL_TYPES = {int: "INTEGER", float: "REAL", bool: "INTEGER", str: "TEXT"}

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


class Store:
    """One SQLite file holding many runs. Safe to open from several processes (SQLite locking)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=60)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self._create()

    def _create(self):
        run_cols = ", ".join(f"{c} TEXT" if c != "run_id" else "run_id TEXT PRIMARY KEY" for c in RUN_COLUMNS)
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS runs ({run_cols})")
        types = _result_column_types()
        cols = ", ".join(f"{c} {types[c]}" for c in COLUMNS)
        self.conn.execute(f"CREATE TABLE IF NOT EXISTS results (row_id INTEGER PRIMARY KEY AUTOINCREMENT, {cols})")
        # a store written before a column existed (gpu_index, gpu_uuid...): add it, empty for old rows
        have = {r[1] for r in self.conn.execute("PRAGMA table_info(results)")}
        for c in COLUMNS:
            if c not in have:
                self.conn.execute(f"ALTER TABLE results ADD COLUMN {c} {types[c]}")
        self.conn.execute("CREATE INDEX IF NOT EXISTS results_run ON results(run_id)")
        self.conn.commit()

    def close(self):
        self.conn.close()

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
        rec = result.to_record()
        placeholders = ", ".join("?" for _ in COLUMNS)
        self.conn.execute(f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                          [rec[c] for c in COLUMNS])
        self.conn.commit()

    # -- reading -----------------------------------------------------------------------------------
    def run(self, run_id: str) -> dict[str, Any] | None:
        cur = self.conn.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE run_id = ?", (run_id,))
        row = cur.fetchone()
        if row is None:
            return None
        rec = dict(zip(RUN_COLUMNS, row))
        rec["receipt"] = json.loads(rec["receipt"]) if rec["receipt"] else {}
        return rec

    def find_run(self, prefix: str) -> dict[str, Any] | None:
        """A run by id or unique id prefix, or 'latest'."""
        if prefix == "latest":
            cur = self.conn.execute("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
        else:
            cur = self.conn.execute("SELECT run_id FROM runs WHERE run_id LIKE ? ORDER BY started_at", (prefix + "%",))
        ids = [r[0] for r in cur.fetchall()]
        return self.run(ids[-1]) if len(ids) == 1 or (prefix == "latest" and ids) else None

    def runs(self) -> pd.DataFrame:
        return pd.read_sql_query(
            f"SELECT {', '.join(c for c in RUN_COLUMNS if c not in ('spec_text', 'receipt'))} FROM runs ORDER BY started_at",
            self.conn,
        )

    def results(self, run_id: str | None = None, decode: bool = True) -> pd.DataFrame:
        """Result rows (every run, or one), JSON columns decoded into Python objects."""
        query, args = "SELECT * FROM results", ()
        if run_id is not None:
            query, args = "SELECT * FROM results WHERE run_id = ? ORDER BY row_id", (run_id,)
        df = pd.read_sql_query(query, self.conn, params=args)
        if decode and len(df):
            for col in JSON_COLUMNS:
                df[col] = df[col].map(lambda v: json.loads(v) if isinstance(v, str) else v)
        return df

    def done_keys(self, run_id: str) -> set[tuple[str, str, str]]:
        """(problem, contract, implementation) of the rows a run already has, for --resume."""
        cur = self.conn.execute("SELECT problem, contract, implementation FROM results WHERE run_id = ?", (run_id,))
        return {tuple(r) for r in cur.fetchall()}
