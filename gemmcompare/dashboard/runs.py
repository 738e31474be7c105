"""The runs a dashboard is built from: every run folder found under the paths given (recursively) and every
run of the SQLite stores given, each with what its receipt says about it (GPU, spec, git commit, date).

Folders that are not runs (a README, plots, a report/) are passed over quietly; a path that holds no run at
all is an error naming it (exit 2).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..errors import InputError
from ..history import run_folders
from ..receipt import gpu_name, receipt_value
from ..report.data import normalise_rows
from ..store.lookup import SourceError, load_source
from ..store.validation import check_rows


@dataclass
class Run:
    run_id: str
    gpu: str
    spec: str
    commit: str  # as recorded (a short or a full hash); '' when the receipt has none
    dirty: bool
    started_at: str  # ISO time from the receipt, else the earliest row's; '' when neither has one
    source: str  # the folder or store it came from
    receipt: dict
    table: pd.DataFrame  # the rows as read; `rows` normalises them on first use
    _rows: pd.DataFrame | None = field(default=None, init=False, repr=False, compare=False)
    _by_cell: dict | None = field(default=None, init=False, repr=False, compare=False)  # rows_at's grouping

    @property
    def rows(self) -> pd.DataFrame:
        """The rows normalised (report.data.normalise_rows), on first use: a dashboard build that redraws
        nothing hashes the rows as read and never pays for it."""
        if self._rows is None:
            self._rows = normalise_rows(self.table)
        return self._rows

    @property
    def pair(self) -> tuple[dict, pd.DataFrame]:
        return self.receipt, self.rows

    def rows_at(self, contract: str, problem: str) -> pd.DataFrame:
        """The run's rows of one (contract, problem); the rows are grouped once, on the first call (a site
        asks every run for every series)."""
        if self._by_cell is None:
            keys = [self.rows["contract"].astype(str), self.rows["problem"].astype(str)] if len(self.rows) else None
            self._by_cell = {key: part for key, part in self.rows.groupby(keys, sort=False)} if keys else {}
        part = self._by_cell.get((contract, problem))
        if part is None:  # an empty slice costs a millisecond: made once
            part = self._by_cell[(contract, problem)] = self.rows.iloc[0:0]
        return part

    @property
    def label(self) -> str:
        """'2026-12-01 5236016': the date and the short commit, for axis ticks and tables."""
        return f"{self.started_at[:10] or '?'} {self.commit[:7] or '?'}{'+' if self.dirty else ''}"


def _started_at(receipt: dict, rows: pd.DataFrame) -> str:
    value = receipt_value(receipt, "started_at", "run.started_at")
    if value:
        return str(value)
    if "started_at" in rows:
        times = rows["started_at"].dropna().astype(str)
        times = times[times != ""]
        if len(times):
            return str(times.min())
    return ""


def _run(receipt: dict, rows: pd.DataFrame, fallback_id: str, source: str) -> Run:
    receipt = dict(receipt or {})
    run_id = str(receipt.get("run_id") or "")
    if not run_id and "run_id" in rows and rows["run_id"].notna().any():
        run_id = str(rows["run_id"].dropna().iloc[0])
    spec = receipt_value(receipt, "spec_name", "spec.name") or Path(str(receipt.get("spec") or "unnamed spec")).stem
    dirty = receipt.get("git_dirty")
    return Run(run_id=run_id or fallback_id, gpu=gpu_name(receipt) or "unknown GPU", spec=str(spec),
               commit=str(receipt.get("git_commit") or ""), dirty=str(dirty).lower() in ("true", "1"),
               started_at=_started_at(receipt, rows), source=source, receipt=receipt, table=rows)


def _store_runs(path: Path) -> list[Run]:
    from ..store import Store

    store = Store.open_read(path)  # read-only: a read never creates or changes a store
    try:
        out = []
        for run_id in store.runs()["run_id"]:
            rec = store.run(run_id) or {}
            rows = store.results(run_id)
            if rows.empty:
                continue
            receipt = dict(rec.get("receipt") or {})
            if not gpu_name(receipt) and rec.get("gpu"):
                receipt["gpu"] = rec["gpu"]
            for key in ("started_at", "git_commit", "spec_name"):
                if not receipt.get(key) and rec.get(key):
                    receipt[key] = rec[key]
            out.append(_run(receipt, check_rows(rows, f"{path}, run {run_id}"), str(run_id), str(path)))
        return out
    except sqlite3.Error as exc:
        raise InputError(f"cannot read the store {path}: {str(exc)[:300]}") from None
    finally:
        store.close()


def find_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Every run under `paths` (run folders, folders of them at any depth, results files, store files), oldest
    first. A run seen twice (a store and its run folder) is kept once."""
    runs: list[Run] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"{path}: no such run folder, folder of runs or store")
        if path.is_file() and path.suffix not in (".json", ".csv"):
            found = _store_runs(path)
        else:
            folders = [path] if path.is_file() else run_folders(path)
            found = []
            for folder in folders:
                try:
                    src = load_source(str(folder))
                except SourceError as exc:
                    raise InputError(str(exc)) from None
                if len(src.rows):
                    found.append(_run(src.receipt, src.rows, folder.name, str(folder)))
        if not found:
            raise InputError(f"{path}: holds no run (no results.json or results.csv with result rows under it)")
        runs.extend(found)
    unique = {r.run_id: r for r in reversed(runs)}  # the first source given wins
    return sorted(unique.values(), key=lambda r: (r.started_at, r.run_id))
