"""The runs a command is given, in the one vocabulary that report, compare, history, dashboard and the Python
API share (README, "Naming runs"); each of them resolves what it is given here and nowhere else.

    a run folder       a folder holding results.json or results.csv (maybe .gz or .xz)
    a results file     results.json or results.csv, maybe compressed
    a run id           an id, a unique prefix of one, or 'latest', in the store (--store, default ./gemmcompare.db)
    STORE.db:RUN       a run of that store file, by id, prefix or 'latest'
    a store            an SQLite store file
    a folder of runs   a folder with run folders below it, at any depth

`load_source` gives one run (report, compare, gemmcompare.load): of a store, its latest (and says so); of a
folder of runs, its only one, else a SourceError that lists them with the argument to pass. `find_sources`
gives every run the sources hold (history, dashboard). Anything else is a SourceError (exit 2) that says what
it is and what to pass instead (file_kinds).
"""

from __future__ import annotations

import difflib
import lzma
import os
import shlex
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ..errors import GemmCompareError, InputError
from ..receipt import gpu_name
from . import DEFAULT_STORE
from .file_kinds import PASS_A_RUN, drawn_from, has_results, not_results
from .run_folder import RESULT_FILES
from .validation import check_rows

if TYPE_CHECKING:  # the store and the files read through pandas, loaded when a run is read
    import pandas as pd

    from .database import Store

MAX_LISTED = 10  # run folders a message names


class SourceError(GemmCompareError):
    """A run that cannot be found or read, or a path that is not a run: the message says what it is and what
    to pass instead."""

    exit_code = 2


@dataclass(frozen=True)
class Terms:
    """How a message names things for whoever asked: the command line's options or the Python API's arguments."""

    store: str = "--store"  # what names another store
    api: bool = False

    def arg(self, value: Any) -> str:
        return repr(str(value)) if self.api else shlex.quote(str(value))

    def run_spec(self, spec: Any) -> str:
        return f"gemmcompare.run({self.arg(spec)})" if self.api else f"gemmcompare run {self.arg(spec)}"

    def store_run(self, store: Any, run_id: str) -> str:
        """What names one run of a store file."""
        return f"gemmcompare.load({self.arg(store)}, run={run_id!r})" if self.api else f"{store}:{run_id}"


CLI = Terms()
API = Terms(store="load(..., store=PATH)", api=True)


@dataclass
class RunSource:
    receipt: dict
    rows: pd.DataFrame
    label: str  # run id (else its folder's name), for titles
    home: Path | None  # where its report goes by default
    store_run: dict | None = None
    origin: str = ""  # the folder, file or store it was read from
    note: str = ""  # a choice made for the reader (which run of a store), to tell them

    @property
    def pair(self) -> tuple[dict, pd.DataFrame]:
        return self.receipt, self.rows


# -- one run ---------------------------------------------------------------------------------------------------

def load_source(text: str | os.PathLike, store: str | os.PathLike = DEFAULT_STORE, terms: Terms = CLI,
                run: str = "latest") -> RunSource:
    """One run, for the commands that read one (report, compare, gemmcompare.load). A store file gives its run
    `run` (its latest by default, said in .note); a folder of runs its only run (said too), else a SourceError
    listing them. `store` is where a bare run id is looked up."""
    form, path, ref = _form(str(text), store, terms)
    if form == "folder":
        found = run_folders(path)
        if len(found) != 1:
            raise SourceError(_not_one_run(path, found, terms))
        src = _from_results(found[0], terms)
        if found[0] != path:
            src.note = f"{path}: reading the one run below it, {found[0]}"
        return src
    if form == "file":
        return _from_results(path, terms)
    if form == "store":
        return _one_of_store(path, run, terms, told=True)
    return _one_of_store(path, ref, terms, looked_up=form == "run id")


def _not_one_run(path: Path, found: list[Path], terms: Terms) -> str:
    if not found:
        return _no_run_here(path)
    shown = "\n  ".join(str(p) for p in found[:MAX_LISTED])
    more = f"\n  ... and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    return (f"{path} is not one run: it holds {len(found)} run folders below it; pass one of them in its place, "
            f"e.g. {terms.arg(found[0])}:\n  {shown}{more}\n"
            f"(gemmcompare dashboard {shlex.quote(str(path))} and gemmcompare history IMPL --runs "
            f"{shlex.quote(str(path))} read them all)")


def _no_run_here(path: Path) -> str:
    if (path / "report.html").exists() or (path / "report.md").exists():
        return f"{path} holds a report, not a run: {drawn_from(path)}"
    return f"{path}: holds no run (no results.json or results.csv in it or in any folder below it); {PASS_A_RUN}"


# -- every run -------------------------------------------------------------------------------------------------

def find_sources(texts: Iterable[str | os.PathLike], store: str | os.PathLike = DEFAULT_STORE,
                 terms: Terms = CLI) -> list[RunSource]:
    """Every run the sources hold, for the commands that read many (history, dashboard): a store gives all its
    runs, a folder every run folder at any depth below it. Runs without result rows are passed over; a source
    that holds none is a SourceError naming it. A run given twice (a store and its run folder) is kept once,
    as the first source that gave it."""
    found: dict[str, RunSource] = {}
    for given in texts:
        runs = [src for src in _all_of(str(given), store, terms) if len(src.rows)]
        if not runs:
            raise SourceError(f"{given}: holds no run with result rows")
        for src in runs:
            found.setdefault(src.label, src)
    return list(found.values())


def _all_of(text: str, store: str | os.PathLike, terms: Terms) -> list[RunSource]:
    form, path, ref = _form(text, store, terms)
    if form == "folder":
        folders = run_folders(path)
        if not folders:
            raise SourceError(_no_run_here(path))
        return [_from_results(folder, terms) for folder in folders]
    if form == "file":
        return [_from_results(path, terms)]
    return _store_runs(path, ref or None, terms, looked_up=form == "run id")


def _form(text: str, store: str | os.PathLike, terms: Terms) -> tuple[str, Path, str]:
    """Which form of the vocabulary `text` is, as (form, path, run): 'folder' (a run folder or a folder of runs),
    'file' (a results file, or a file that will say what it is), 'store' (a store file), 'store run'
    (STORE.db:RUN) or 'run id' (in `store`). A path that is not there is a SourceError."""
    path = Path(text)
    if path.is_dir():
        return "folder", path, ""
    if path.is_file():
        return ("store" if _is_store(path) else "file"), path, ""
    store_file, ref = _store_and_run(text)
    if store_file is not None:
        return "store run", store_file, ref
    _check_not_a_missing_path(text, terms)
    return "run id", Path(store), text


def run_folders(path: Path) -> list[Path]:
    """`path` when it is a run folder, else every run folder below it at any depth, sorted. A run folder is one
    run: nothing below it is searched; nor are hidden folders (.git, .venv)."""
    path = Path(path)
    if has_results(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        if any(name in files for name in RESULT_FILES):
            found.append(Path(root))
            dirs[:] = []
        else:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
    return sorted(found)


# -- reading ---------------------------------------------------------------------------------------------------

def _from_results(path: Path, terms: Terms) -> RunSource:
    """A run folder or a results file, read and checked."""
    from .run_folder import load_result_file

    if path.is_file():
        why = not_results(path, terms)
        if why:
            raise SourceError(why)
    try:
        receipt, rows = load_result_file(path)
    except InputError as exc:  # not gemmcompare results, or a row that cannot be a measurement: it says which
        raise SourceError(str(exc)) from None
    except (OSError, ValueError, KeyError, RecursionError, EOFError, lzma.LZMAError) as exc:
        raise SourceError(f"{path}: cannot read results ({str(exc)[:300]})") from None
    receipt = dict(receipt or {})
    stem = path.name.split(".")[0]  # results.json, results.csv.gz: "results"
    folder = path if path.is_dir() else path.parent
    named = folder.name if path.is_dir() or stem == "results" else stem  # results.csv: its folder's name
    ids = rows["run_id"].dropna() if "run_id" in rows else []
    label = str(receipt.get("run_id") or (ids.iloc[0] if len(ids) else "") or named)
    home = folder / ("report" if path.is_dir() or stem == "results" else f"{stem}_report")
    return RunSource(receipt, rows, label, home, origin=str(path))


def _is_store(path: Path) -> bool:
    from .database import is_sqlite_file

    return is_sqlite_file(path)


def _store_and_run(text: str) -> tuple[Path | None, str]:
    """STORE.db:RUN, when the part before the last ':' is a file (an SQLite store, or it will say what it is)."""
    store, sep, ref = text.rpartition(":")
    if sep and store and ref and Path(store).is_file():
        return Path(store), ref
    return None, ""


def _check_not_a_missing_path(text: str, terms: Terms) -> None:
    """A text that reads as a path (a '/', a '.', a suffix) names a file or folder, never a run id: when there
    is none, say so, with the near names beside where it would be."""
    if not ("/" in text or "\\" in text or "." in text):
        return
    path = Path(text)
    near: list[str] = []
    try:
        near = difflib.get_close_matches(path.name, os.listdir(path.parent), n=3, cutoff=0.6)
    except OSError:
        pass
    hint = f" (did you mean {' or '.join(terms.arg(path.parent / n) for n in near)}?)" if near else ""
    raise SourceError(f"{text}: no such run folder, results file or store{hint}")


@contextmanager
def _reading(store_file: Path, ref: str, terms: Terms, looked_up: bool) -> Iterator[Store]:
    """The store, open read-only (a read never creates or changes one); what goes wrong reading it is a
    SourceError that names it."""
    from .database import Store

    if looked_up and not store_file.exists():
        raise SourceError(f"'{ref}' is not a file or folder, and there is no store at {store_file} to look it up in "
                          f"({terms.store} names another)")
    try:
        store = Store.open_read(store_file)
    except InputError as exc:  # not an SQLite file, not a gemmcompare store: it says which
        raise SourceError(str(exc)) from None
    try:
        yield store
    except InputError as exc:  # a row or receipt that cannot be a measurement: it says which
        raise SourceError(str(exc)) from None
    except (sqlite3.Error, ValueError) as exc:  # a damaged database, a JSON column that is not JSON
        raise SourceError(f"cannot read the store {store_file}: {str(exc)[:300]}") from None
    finally:
        store.close()


def _find(store: Store, ref: str) -> dict:
    """The run `ref` (id, unique prefix, 'latest') names in the store."""
    run = store.find_run(ref)
    if run is not None:
        return run
    ids = [str(i) for i in store.runs()["run_id"]]
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) > 1:
        raise SourceError(f"run id prefix '{ref}' is ambiguous in {store.path}: "
                          + ", ".join(matches[:MAX_LISTED]) + (" ..." if len(matches) > MAX_LISTED else ""))
    if not ids:
        raise SourceError(f"no run '{ref}': the store {store.path} holds no runs")
    raise SourceError(f"no run '{ref}' in {store.path} (latest runs: {', '.join(ids[-5:])})")


def _store_runs(store_file: Path, ref: str | None, terms: Terms, looked_up: bool = False) -> list[RunSource]:
    """The run `ref` names in the store, or (None) all of its runs, oldest first."""
    with _reading(store_file, ref or "", terms, looked_up) as store:
        runs = [_find(store, ref)] if ref is not None else [store.run(i) for i in store.runs()["run_id"]]
        return [_store_source(store, run) for run in runs if run is not None]


def _one_of_store(store_file: Path, ref: str, terms: Terms, looked_up: bool = False, told: bool = False) -> RunSource:
    """One run of a store; `told`: the store file itself was given, so the note says which of its runs is read."""
    with _reading(store_file, ref, terms, looked_up) as store:
        src = _store_source(store, _find(store, ref))
        count = len(store.runs()) if told and ref == "latest" else 0
    if count:
        src.note = (f"{store_file}: reading its only run, {src.label}" if count == 1 else
                    f"{store_file} holds {count} runs: reading the latest, {src.label} "
                    f"({terms.store_run(store_file, 'RUN_ID')} names another)")
    return src


def _store_source(store: Store, run: dict) -> RunSource:
    """A run of a store, its receipt completed from the store's runs table where it lacks a field."""
    run_id = str(run["run_id"])
    rows = check_rows(store.results(run_id), f"{store.path}, run {run_id}")
    receipt = dict(run.get("receipt") or {})
    receipt.setdefault("run_id", run_id)
    if not gpu_name(receipt) and run.get("gpu"):
        receipt["gpu"] = run["gpu"]
    for key, column in (("started_at", "started_at"), ("git_commit", "git_commit"), ("git_dirty", "git_dirty"),
                        ("spec_name", "name")):
        if receipt.get(key) in (None, "") and run.get(column) not in (None, ""):
            receipt[key] = run[column]
    run_dir = Path(run["run_dir"]) if run.get("run_dir") else None
    home = run_dir / "report" if run_dir and run_dir.is_dir() else Path("reports") / run_id
    return RunSource(receipt, rows, run_id, home, run, origin=str(store.path))
