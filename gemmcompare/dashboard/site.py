"""Building the dashboard's static site: which pages there are (a page per series, per group of runs, per
(contract, problem) on several GPUs, and the index), which of them changed since the last build into the same
folder (manifest.py), drawing those on a pool of processes (jobs.py), and deleting what is no longer drawn."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable

from ..files import slug
from ..report import rendering
from ..report.data import problem_sort_key
from . import jobs
from .manifest import Manifest, cell_digests, code_fingerprint, digest
from .pages import GroupCell, SeriesRow, index_page
from .purpose import Group, group_runs
from .runs import Run, find_runs
from .series import METRICS

PROGRESS_FROM = 10  # pages; fewer are drawn without a progress bar
SUBFOLDERS = ("spec", "series", "across")


@dataclass
class Dashboard:
    out: Path
    runs: list[Run]
    pages: list[Path] = field(default_factory=list)  # every page of the site, index first
    groups: list[Group] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)  # pages (paths in out) drawn by this build
    unchanged: list[str] = field(default_factory=list)  # pages whose inputs had not changed: kept as they were
    removed: list[str] = field(default_factory=list)  # files of pages the last build drew and this one does not

    @property
    def index(self) -> Path:
        return self.out / "index.html"

    @property
    def series_pages(self) -> list[Path]:
        return [p for p in self.pages if p.parent.name == "series"]


def _unique_names(keys: Iterable[tuple], prefix: str) -> dict[tuple, str]:
    out, used = {}, set()
    for key in keys:
        name = slug("__".join(k for k in key if k)) or prefix
        stem, i = name, 2
        while name in used:
            name, i = f"{stem}_{i}", i + 1
        used.add(name)
        out[key] = name
    return out


@dataclass
class _Page:
    path: str  # in the output folder
    inputs: str  # the hash of everything that draws it
    make: Callable[[], object]  # its job (jobs.py), made only when it is drawn: a job copies rows
    index: dict  # what the index shows of it besides the job's summary
    png: bool = False


class _Inputs:
    """Hashes of the runs: each run's receipt and facts, and each of its (contract, problem) cells' rows."""

    def __init__(self, runs: list[Run]):
        self.meta = {r.run_id: digest(r.run_id, r.gpu, r.spec, r.commit, r.dirty, r.started_at, r.source,
                                      len(r.table), r.receipt) for r in runs}
        self.cells = {r.run_id: cell_digests(r.table) for r in runs}

    def run(self, r: Run, cell: tuple[str, str] | None = None) -> tuple[str, str]:
        rows = self.cells[r.run_id]
        return self.meta[r.run_id], rows[cell] if cell else digest(sorted(rows.items()))


def build_dashboard(paths: Iterable, out: str | Path, *, metric: str = "tflops", threshold: float | None = None,
                    progress: bool = True) -> Dashboard:
    """Find every run under `paths` (runs.find_runs) and write the site into `out`, drawing only the pages whose
    inputs changed since the last build into `out`. metric: 'tflops', 'pct_of_peak' (each GPU's datasheet peak for
    the contract's math) or 'gflop_per_j' (GFLOP per joule, rows measured with energy); threshold: the smallest change that counts (default: each later run's spec's,
    else compare's default)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}, got {metric!r}")
    out = Path(out)
    manifest = Manifest(out)
    code = manifest.code = code_fingerprint(manifest.code)
    # a first build (or new code) redraws every page: the pool's start-up then overlaps reading the runs
    ours = not manifest.old and not rendering.running() and _prestart()
    try:
        d = Dashboard(out, find_runs(paths))
        for sub in SUBFOLDERS:
            (d.out / sub).mkdir(parents=True, exist_ok=True)
        d.groups = group_runs(d.runs)
        pages, summaries = _plan(d, _Inputs(d.runs), code, metric, threshold), {}
        todo = []
        for p in pages:
            entry = manifest.unchanged(p.path, p.inputs)
            if entry is None:
                todo.append(p)
            else:
                summaries[p.path] = entry["summary"]
                d.unchanged.append(p.path)
        ours = ours or (len(todo) > 1 and not rendering.running() and _prestart(len(todo)))
        try:
            summaries.update(_draw(todo, manifest, progress, len(pages)))
        except BaseException:  # Ctrl-C or a failed page: the pages drawn so far need not be drawn again
            manifest.save(keep_old=True)
            raise
        d.drawn = [p.path for p in todo]
    finally:
        if ours:
            rendering.shutdown()
    _index(d, pages, manifest, summaries, code, metric, threshold)
    d.pages = [d.index] + [d.out / p.path for p in pages]
    for name in manifest.stale():
        (d.out / name).unlink(missing_ok=True)
        d.removed.append(name)
    manifest.save()
    return d


def _prestart(pages: int | None = None) -> bool:
    """The pool, a worker per core this process may use (it only waits while they draw), at most
    rendering.MAX_WORKERS (each holds its own pandas and matplotlib) and at most one per page to draw."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cores, rendering.MAX_WORKERS, pages or rendering.MAX_WORKERS)
    return rendering.prestart(workers=workers, preload=("gemmcompare.dashboard.jobs", "gemmcompare.dashboard.plots"))


def _plan(d: Dashboard, inputs: _Inputs, code: dict, metric: str, threshold: float | None) -> list[_Page]:
    """Every page of the site but the index, each with the hash of its inputs and the maker of its job."""
    keys = sorted({(r.gpu, c, p) for r in d.runs for c, p in inputs.cells[r.run_id]})
    series_names = _unique_names(keys, "series")
    run_rows = {r.run_id: len(r.table) for r in d.runs}
    on_cell: dict[tuple[str, str, str], list[Run]] = {}
    for r in d.runs:
        for c, p in inputs.cells[r.run_id]:
            on_cell.setdefault((r.gpu, c, p), []).append(r)

    def series_job(key) -> jobs.SeriesJob:
        gpu, contract, problem = key
        here = on_cell[key]
        return jobs.SeriesJob(gpu, contract, problem, [jobs.only_rows(r, r.rows_at(contract, problem)) for r in here],
                              {r.run_id: run_rows[r.run_id] for r in here}, metric, threshold, d.out / "series",
                              series_names[key])

    series_inputs, pages = {}, []
    for key in keys:
        h = series_inputs[key] = digest("series", code["hash"], metric, threshold, series_names[key], key,
                                        [inputs.run(r, key[1:]) for r in on_cell[key]])
        pages.append(_Page(f"series/{series_names[key]}.html", h, partial(series_job, key),
                           {"gpu": key[0], "contract": key[1], "problem": key[2]}, png=True))
    group_names = _unique_names([(g.gpu, g.spec, g.tag) for g in d.groups], "spec")
    for g in d.groups:
        pairs = {cp for r in g.runs for cp in inputs.cells[r.run_id]}
        links = [(f"{c} {p}", f"../series/{series_names[(g.gpu, c, p)]}.html")
                 for c, p in sorted(pairs, key=lambda cp: (cp[0], problem_sort_key(cp[1])))]
        others = [(o.label, f"{group_names[(o.gpu, o.spec, o.tag)]}.html") for o in d.groups
                  if o is not g and (o.gpu, o.spec) == (g.gpu, g.spec)]
        name = group_names[(g.gpu, g.spec, g.tag)]
        last_two = len(g.runs) - 2  # the comparison reads the rows of the last two; the runs table, every run

        def group_job(g=g, links=links, others=others, name=name, last_two=last_two) -> jobs.GroupJob:
            light = [r if i >= last_two else jobs.only_rows(r, r.table.iloc[0:0]) for i, r in enumerate(g.runs)]
            return jobs.GroupJob(g.gpu, g.spec, g.label, g.scope, light, {r.run_id: run_rows[r.run_id] for r in g.runs},
                                 threshold, links, others, d.out / "spec", name)

        h = digest("group", code["hash"], threshold, name, g.label, g.scope, links, others,
                   [inputs.run(r) if i >= last_two else inputs.meta[r.run_id] for i, r in enumerate(g.runs)])
        pages.append(_Page(f"spec/{name}.html", h, group_job,
                           {"gpu": g.gpu, "spec": g.spec, "label": g.label, "runs": len(g.runs),
                            "latest": g.runs[-1].label}))
    on_gpus: dict[tuple[str, str], list[str]] = {}
    for gpu, c, p in keys:
        on_gpus.setdefault((c, p), []).append(gpu)
    across = {cp: gpus for cp, gpus in on_gpus.items() if len(gpus) > 1}
    for cp, name in _unique_names(sorted(across), "across").items():
        members = [(g, *cp) for g in across[cp]]
        h = digest("across", code["hash"], name, [series_inputs[k] for k in members])

        def across_job(members=members, name=name) -> jobs.AcrossJob:
            return jobs.AcrossJob([series_job(k) for k in members], d.out / "across", name)

        pages.append(_Page(f"across/{name}.html", h, across_job, {"contract": cp[0], "problem": cp[1]}, png=True))
    return pages


def _files(p: _Page) -> list[str]:
    return [p.path] + ([p.path[:-len(".html")] + ".png"] if p.png else [])


def _draw(todo: list[_Page], manifest: Manifest, progress: bool, total: int) -> dict[str, dict]:
    """Draw the pages of `todo` (on the pool when one runs), recording each in the manifest as it is done;
    returns page -> summary."""
    from tqdm import tqdm

    bar = tqdm(total=total, initial=total - len(todo), desc="dashboard", unit="page", file=sys.stderr,
               dynamic_ncols=True, disable=not progress or len(todo) < PROGRESS_FROM)
    summaries = {}
    try:
        if rendering.running():
            futures = [(p, rendering.call(jobs.draw, p.make())) for p in todo]
            results = ((p, f.result()) for p, f in futures)
        else:
            results = ((p, jobs.draw(p.make())) for p in todo)
        for p, summary in results:
            summaries[p.path] = summary
            manifest.record(p.path, p.inputs, _files(p), summary)
            bar.update()
    finally:
        bar.close()
    return summaries


def _index(d: Dashboard, pages: list[_Page], manifest: Manifest, summaries: dict, code: dict, metric: str,
           threshold: float | None) -> None:
    """The index, from what each page's job found (this build's or, for a page kept, the last build's)."""
    cells, rows, across = [], [], []
    for p in pages:
        folder, i, s = p.path.split("/")[0], p.index, summaries[p.path]
        if folder == "series":
            rows.append(SeriesRow(i["gpu"], i["contract"], i["problem"], p.path, s["runs"], s["implementations"],
                                  s["flagged"], s["latest"]))
        elif folder == "spec":
            cells.append(GroupCell(i["gpu"], i["spec"], i["label"], p.path, i["runs"], i["latest"], s["verdict"],
                                   s["css"]))
        else:
            across.append((f"{i['contract']} {i['problem']}", p.path))
    inputs = digest("index", code["hash"], metric, threshold, len(d.runs), [vars(c) for c in cells],
                    [vars(r) for r in rows], across)
    if manifest.unchanged("index.html", inputs) is None:
        index_page(d.out, len(d.runs), cells, rows, across, metric, threshold, problem_sort_key)
        manifest.record("index.html", inputs, ["index.html"])
        d.drawn.insert(0, "index.html")
    else:
        d.unchanged.insert(0, "index.html")
