"""The dashboard's drawing jobs, one per page: each carries exactly that page's inputs (its runs, holding only
the rows the page shows), so that a worker process computes, draws and writes the page whole and hands back
only what the index needs from it. site.py runs them on a pool of processes, or in its own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..receipt import compare_threshold
from .pages import across_page, group_page, series_page, verdict_counts
from .runs import Run
from .series import Series, build_series
from .steps import flagged, latest_comparison


def only_rows(run: Run, rows) -> Run:
    """`run` holding `rows` only (a page's share of its normalised rows, cheap to hand to another process)."""
    return dataclasses.replace(run, table=rows)


@dataclass
class SeriesJob:
    gpu: str
    contract: str
    problem: str
    runs: list[Run]  # the runs with rows here, oldest first, each holding only these rows
    run_rows: dict[str, int]  # run id -> its rows in all (the runs table shows them)
    metric: str
    threshold: float | None
    out: Path
    name: str

    def series(self) -> Series:
        return build_series(self.runs, self.gpu, self.contract, self.problem, self.metric, self.threshold)


def draw_series(job: SeriesJob) -> dict:
    """The series page and its figure; returns what the index shows of it."""
    s = job.series()
    shown = compare_threshold(s.runs[-1].receipt, job.threshold)  # the band drawn: the latest run's
    series_page(s, job.out, job.name, shown, job.run_rows)
    flags = flagged(s.steps)
    last = flags[flags["x"] == len(s.runs) - 1]
    return {"runs": len(s.runs), "implementations": int(s.points["implementation"].nunique()),
            "flagged": int(len(flags)), "latest": [[str(v), int(n)] for v, n in last["verdict"].value_counts().items()]}


@dataclass
class GroupJob:
    gpu: str
    spec: str
    label: str
    scope: str
    runs: list[Run]  # oldest first; only the last two hold their rows (the comparison's)
    run_rows: dict[str, int]
    threshold: float | None
    links: list[tuple[str, str]]  # (text, href) of the series its runs have rows in
    others: list[tuple[str, str]]  # (label, href) of the spec's other groups on this GPU
    out: Path
    name: str


def draw_group(job: GroupJob) -> dict:
    comp = latest_comparison(job.runs, job.threshold)
    group_page(job.gpu, job.spec, job.label, job.scope, job.runs, job.run_rows, comp, job.links, job.others,
               job.out, job.name)
    text, css = verdict_counts(comp)
    return {"verdict": text, "css": css}


@dataclass
class AcrossJob:
    series: list[SeriesJob]  # one per GPU
    out: Path
    name: str


def draw_across(job: AcrossJob) -> dict:
    across_page([s.series() for s in job.series], job.out, job.name)
    return {}


DRAW = {SeriesJob: draw_series, GroupJob: draw_group, AcrossJob: draw_across}


def draw(job) -> dict:
    return DRAW[type(job)](job)
