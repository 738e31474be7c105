"""Joining runs made apart (`gemmcompare merge OUT SOURCE...`): the shards of a job array, or runs of the
same spec on several hosts, become one run with one receipt per GPU.

A source is a store (every run in it) or a run folder / results.json (one run). The runs must share
the spec (its hash), no row may appear twice, and when they are shards, every shard of the split must
be there and complete (--allow-partial takes what there is, and the merged run says `partial`). Rows
keep the GPU that measured them (gpu_index, gpu_uuid); each % of baseline was computed on that GPU in
its own run and is kept as it is: a merge never computes a ratio across runs.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import GemmCompareError
from ..progress import SILENT, Progress
from ..receipt import gpu_name
from ..results import COLUMNS, JSON_COLUMNS, Result, Status
from .database import Store, is_sqlite_file, new_run_id
from .run_folder import RunFolder, load_result_file


class MergeError(GemmCompareError):
    exit_code = 2


@dataclass
class SourceRun:
    where: str  # the path given, with the run id for a store
    receipt: dict
    rows: pd.DataFrame
    status: str | None  # from the store; None for a folder (a folder does not say)
    spec_text: str | None = None
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def run_id(self) -> str:
        return str(self.receipt.get("run_id") or self.where)

    @property
    def shard(self) -> dict | None:
        return self.receipt.get("shard")


def read_sources(paths: list[str], progress: Progress = SILENT) -> list[SourceRun]:
    runs: list[SourceRun] = []
    with progress.items(len(paths), "reading", unit="source") as items:
        for text in paths:
            t0 = time.monotonic()
            found = _read_source(text)
            runs += found
            items.done(f"read {text}: {len(found)} run(s), {sum(len(r.rows) for r in found)} rows",
                       time.monotonic() - t0)
    return runs


def _read_source(text: str) -> list[SourceRun]:
    """The runs of one source: every run of a store, or the one run of a folder or results file."""
    path = Path(text)
    if not path.exists():
        raise MergeError(f"{text}: no such store, run folder or results file")
    if not (path.is_file() and is_sqlite_file(path)):
        try:
            receipt, rows = load_result_file(path)
        except (OSError, ValueError, KeyError) as exc:
            raise MergeError(f"{text}: cannot read results ({exc})") from None
        return [SourceRun(text, dict(receipt or {}), rows, None)]
    store = Store.open_read(path)  # a source is read, never changed
    try:
        ids = list(store.runs()["run_id"])
        if not ids:
            raise MergeError(f"{text}: the store holds no runs")
        runs = []
        for run_id in ids:
            run = store.run(run_id)
            receipt = {"run_id": run_id, **(run["receipt"] or {})}
            runs.append(SourceRun(f"{text}:{run_id}", receipt, store.results(run_id), run["status"],
                                  run["spec_text"], run["started_at"], run["finished_at"]))
        return runs
    finally:
        store.close()


def check(runs: list[SourceRun], allow_partial: bool) -> list[str]:
    """Raise MergeError unless the runs can be one run; returns what makes the result partial."""
    hashes = {r.receipt.get("spec_hash") for r in runs}
    if len(hashes) != 1 or None in hashes:
        listing = ", ".join(f"{r.where} ({str(r.receipt.get('spec_hash'))[:12]})" for r in runs)
        raise MergeError(f"the runs come from different specs (or a run without a spec hash): {listing}")
    seen: dict[tuple, str] = {}
    for r in runs:
        for key in zip(r.rows.get("problem", []), r.rows.get("contract", []), r.rows.get("implementation", [])):
            if key in seen:
                raise MergeError(f"row {key} is in {seen[key]} and in {r.where}: a row may come from one run only "
                                 f"(the same run given twice?)")
            seen[key] = r.where
    partial: list[str] = []
    sharded = [r for r in runs if r.shard]
    if sharded and len(sharded) != len(runs):
        raise MergeError("some runs are shards and some are not: " +
                         ", ".join(f"{r.where} ({_shard_label(r.shard)})" for r in runs))
    if sharded:
        counts = {r.shard["count"] for r in runs}
        if len(counts) != 1:
            raise MergeError(f"the shards come from different splits ({', '.join(f'/{c}' for c in sorted(counts))})")
        count = counts.pop()
        have = {r.shard["index"] for r in runs}
        for i in range(count):
            if i not in have:
                partial.append(f"shard {i}/{count} is missing")
    for r in runs:
        if r.status not in (None, "complete"):
            partial.append(f"{r.where} is {r.status}")
        expected = (r.shard or {}).get("rows")
        if expected is not None and len(r.rows) < expected:
            partial.append(f"{r.where} has {len(r.rows)} of its {expected} rows")
    if partial and not allow_partial:
        raise MergeError("; ".join(partial) + " (--allow-partial merges what there is)")
    return partial


def _shard_label(shard: dict | None) -> str:
    return f"shard {shard['index']}/{shard['count']}" if shard else "not a shard"


_TYPES = {f.name: str(f.type) for f in fields(Result)}


def result_from_record(rec: dict[str, Any], run_id: str) -> Result:
    """A row read back (store or folder: pandas may have turned missing values into NaN and integers into
    floats) as a Result of the merged run."""
    out: dict[str, Any] = {}
    for name in COLUMNS:
        value = rec.get(name)
        if isinstance(value, float) and math.isnan(value):
            value = None
        if name in JSON_COLUMNS and isinstance(value, str):
            value = json.loads(value)
        if value is None:
            continue  # the field's default
        kind = _TYPES[name]
        if kind.startswith("bool"):
            value = bool(value)
        elif kind.startswith("int"):
            value = int(value)
        out[name] = value
    out["run_id"] = run_id
    out["status"] = Status(out["status"])
    return Result(**out)


def merge(out_dir: Path, sources: list[str], store_path: Path, allow_partial: bool = False,
          progress: Progress = SILENT) -> tuple[str, int, list[str]]:
    """Write the merged run to `out_dir` (a run folder) and to the store; returns (run id, rows, what is
    missing). `progress` hears of each source read, the check, and each run's rows written."""
    out_dir = Path(out_dir)
    if (out_dir / "results.json").exists():
        raise MergeError(f"{out_dir} already holds a run; merge into a new folder")
    runs = read_sources(sources, progress)
    with progress.step("checking") as step:
        partial = check(runs, allow_partial)
        step.done = f"checked: {len(runs)} run(s) of one spec, no row twice" + (", partial" if partial else "")
    runs.sort(key=lambda r: ((r.shard or {}).get("index", 0), r.started_at or ""))
    run_id = new_run_id()
    receipt = _receipt(runs, run_id)
    if partial:  # said in the folder's receipt too: a run folder copied out of the store keeps no run status
        receipt["partial"] = partial
    commits = sorted({str(r.receipt.get("git_commit")) for r in runs})
    if len(commits) > 1:
        print(f"note: the runs were made at different commits ({', '.join(commits)}); each is in merged_from",
              file=sys.stderr)
    store = Store(store_path)
    try:
        if store.run(run_id) is not None:
            raise MergeError(f"run {run_id} already exists in {store_path}")
        first = runs[0]
        store.create_run({
            "run_id": run_id, "name": first.receipt.get("spec_name"), "spec_path": first.receipt.get("spec"),
            "spec_hash": first.receipt.get("spec_hash"), "status": "running",
            "started_at": min((r.started_at for r in runs if r.started_at), default=None),
            "gpu": " + ".join(sorted({g.get("name") or "" for g in receipt["gpus"]} - {""})) or gpu_name(first.receipt),
            "cc": first.receipt.get("compute_capability"), "git_commit": first.receipt.get("git_commit"),
            "git_dirty": first.receipt.get("git_dirty"), "gemmcompare_version": first.receipt.get("gemmcompare"),
            "run_dir": str(out_dir), "receipt": receipt,
            "spec_text": next((r.spec_text for r in runs if r.spec_text), None),
        })
        folder = RunFolder(out_dir)
        folder.write_receipt(receipt)
        count = 0
        with progress.items(len(runs), "writing", unit="run") as items:
            for r in runs:
                t0 = time.monotonic()
                rows = [result_from_record(rec, run_id) for rec in r.rows.to_dict("records")]
                store.add_results(rows)
                folder.add_many(rows)
                count += len(rows)
                items.done(f"wrote {len(rows)} rows of {r.where}", time.monotonic() - t0)
        finished = max((r.finished_at for r in runs if r.finished_at), default=None)
        store.set_run_status(run_id, "partial" if partial else "complete", finished)
    finally:
        store.close()
    return run_id, count, partial


def _receipt(runs: list[SourceRun], run_id: str) -> dict:
    """The first run's receipt (the environment half is the same software on every host, or the
    merged_from list says otherwise), with every GPU's receipt and where each part came from."""
    first = dict(runs[0].receipt)
    for key in ("shard", "phases", "resumed_from_commit"):
        first.pop(key, None)
    gpus: list[dict] = []
    for r in runs:
        listed = r.receipt.get("gpus") or [{"name": gpu_name(r.receipt), "uuid": None, "host": r.receipt.get("host")}]
        for g in listed:
            if g.get("uuid") is None or all(g.get("uuid") != have.get("uuid") for have in gpus):
                gpus.append({**g, "from_run": r.run_id})
    first.update({
        "run_id": run_id, "gpus": gpus, "placement": {"kind": "merged"},
        "merged_from": [{"run_id": r.run_id, "source": r.where, "shard": r.shard, "status": r.status,
                         "rows": len(r.rows), "host": r.receipt.get("host"), "git_commit": r.receipt.get("git_commit"),
                         "git_dirty": r.receipt.get("git_dirty"), "placement": r.receipt.get("placement"),
                         "phases": r.receipt.get("phases")} for r in runs],
    })
    return first
