"""The runs a dashboard is built from: every run the paths given hold (store.sources: run folders at any depth,
every run of a store), each with what its receipt says about it (GPU, spec, git commit, date).

Folders that are not runs (a README, plots, a report/) are passed over quietly; a path that holds no run at
all is an error naming it (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..receipt import gpu_name, receipt_value
from ..report.data import normalise_rows
from ..store.sources import find_sources


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


def find_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Every run the paths hold, found as `history` finds them (store.sources.find_sources: run folders, folders
    of them at any depth, results files, store files, run ids), oldest first. A run seen twice (a store and its
    run folder) is kept once."""
    runs = [_run(src.receipt, src.rows, src.label, src.origin) for src in find_sources(paths)]
    return sorted(runs, key=lambda r: (r.started_at, r.run_id))
