"""Finding a run: by id, unique id prefix or 'latest' in a store, or as a run folder, results.json or
results.csv on disk (committed baselines). Every command that reads runs comes through here."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import GemmCompareError
from ..receipt import gpu_name
from . import DEFAULT_STORE
from .validation import check_rows

if TYPE_CHECKING:  # the store and the files read through pandas, loaded when a run is read
    import pandas as pd


class SourceError(GemmCompareError):
    """A run id, run folder or results file that cannot be found or read."""

    exit_code = 2


@dataclass
class RunSource:
    receipt: dict
    rows: pd.DataFrame
    label: str  # run id or file name, for titles
    home: Path | None  # where its report goes by default
    store_run: dict | None = None

    @property
    def pair(self) -> tuple[dict, pd.DataFrame]:
        return self.receipt, self.rows


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith((".json", ".csv", ".gz", ".xz")) or text.startswith(".")


def load_source(text: str, store_path: str | Path = DEFAULT_STORE, store_option: str = "--store") -> RunSource:
    """A run from a path (run folder, results.json, results.csv) or from the store (id, prefix, 'latest').
    store_option: how the caller names another store in a message (the command line's --store, the API's
    store=)."""
    from .database import Store
    from .run_folder import load_result_file

    path = Path(text)
    if path.exists():
        _check_is_one_run(path)
        try:
            receipt, rows = load_result_file(path)
        except (OSError, ValueError, KeyError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            raise SourceError(f"{text}: cannot read results ({str(exc)[:300]})") from None
        receipt = dict(receipt or {})
        stem = path.name.split(".")[0]  # results.json, results.csv.gz: "results"
        named = path if path.is_dir() or stem != "results" else path.parent  # results.csv: its folder's name
        label = str(receipt.get("run_id") or named.name)
        if path.is_dir():
            home = path / "report"
        else:
            home = path.parent / ("report" if stem == "results" else f"{stem}_report")
        return RunSource(receipt, rows, label, home)
    if _looks_like_path(text):
        raise SourceError(f"{text}: no such run folder or results file")
    store_file = Path(store_path)
    if not store_file.exists():
        raise SourceError(f"'{text}' is not a file or folder, and there is no store at {store_file} to look it up in "
                          f"({store_option} names another)")
    store = Store.open_read(store_file)  # read-only: a read never creates or changes a store
    try:
        run = store.find_run(text)
        if run is None:
            ids = [str(i) for i in store.runs()["run_id"]]
            matches = [i for i in ids if i.startswith(text)]
            if len(matches) > 1:
                raise SourceError(f"run id prefix '{text}' is ambiguous in {store_file}: "
                                  + ", ".join(matches[:10]) + (" ..." if len(matches) > 10 else ""))
            if not ids:
                raise SourceError(f"no run '{text}': the store {store_file} holds no runs")
            recent = ", ".join(ids[-5:])
            raise SourceError(f"no run '{text}' in {store_file} (latest runs: {recent})")
        rows = check_rows(store.results(run["run_id"]), f"{store_file}, run {run['run_id']}")
    except (sqlite3.Error, ValueError) as exc:  # a damaged database, a JSON column that is not JSON
        raise SourceError(f"cannot read the store {store_file}: {str(exc)[:300]}") from None
    finally:
        store.close()
    receipt = dict(run.get("receipt") or {})
    receipt.setdefault("run_id", run["run_id"])
    if not gpu_name(receipt) and run.get("gpu"):
        receipt["gpu"] = run["gpu"]
    run_dir = Path(run["run_dir"]) if run.get("run_dir") else None
    home = run_dir / "report" if run_dir and run_dir.is_dir() else Path("reports") / run["run_id"]
    return RunSource(receipt, rows, run["run_id"], home, run)




def _check_is_one_run(path: Path) -> None:
    """A path that is not one run says what it is and what to pass instead (SourceError, exit 2): a run's
    receipt.json (its folder holds the rows), a folder whose runs sit further down (they are listed), a folder
    or file with no run at all. Without this, a receipt read as an empty result (0 rows, exit 0)."""
    from .run_folder import RESULT_FILES

    if path.is_file() and path.name.split(".")[0] == "receipt":
        has_rows = any((path.parent / name).exists() for name in RESULT_FILES)
        raise SourceError(f"{path} is a run's receipt (the environment it ran in), not its rows: "
                          + (f"pass the run folder {path.parent} instead" if has_rows else
                             f"its folder {path.parent} holds no results.json or results.csv either"))
    if path.is_dir() and not any((path / name).exists() for name in RESULT_FILES):
        below = sorted({p.parent for name in RESULT_FILES for p in path.rglob(name)})
        if not below:
            raise SourceError(f"{path}: no run here (no results.json or results.csv in it or in any folder below)")
        shown = "\n  ".join(str(p) for p in below[:10]) + (f"\n  ... and {len(below) - 10} more" if len(below) > 10 else "")
        raise SourceError(f"{path} is not one run but holds {len(below)} run folder(s) below it; name one of them "
                          f"(e.g. gemmcompare report {below[0]}):\n  {shown}\n"
                          f"(`gemmcompare dashboard {path}` and `gemmcompare history IMPL --runs {path}` read them all)")
