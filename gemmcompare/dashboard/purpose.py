"""Which runs of a spec are one series. The index compares each run only with the previous run of its group
(GPU, spec name, purpose), so that a probe or a part of a study never stands in for the study's last run.

A run's purpose is what it measured and how:
  - its L2 policy (receipt `timing.l2`): rows under another policy measure another thing;
  - whether any row was timed (a --check-only run has no time to compare);
  - the shard it was (`run --shard I/N`), and the narrowing `run` applied (--shapes, --only, --check-only,
    --l2), which receipts record as `narrowed` (plan.narrow); older receipts do not say, so
  - its coverage decides the rest: a run continues a group when it measured every (contract, problem,
    implementation) the group's latest run measured: the same rows, or more (a spec that grew). A run that
    measured less or other rows (a probe of one shape, a re-check of some kernels) starts a group of its own.

Per GPU and spec, the group whose latest run measured the most rows (and was not narrowed) is the spec's
main series; every other group is labelled by what it measured.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..files import slug
from ..report.data import timing_summary
from .runs import Run

MAX_LISTED = 2  # problems named in a label; more are counted


@dataclass
class Group:
    gpu: str
    spec: str
    runs: list[Run]  # oldest first
    bucket: tuple  # (L2 policy, timed, shard, narrowing): runs of different buckets never share a group
    kind: str = ""  # 'main', 'part' (rows within the main's), 'other' or 'narrowed'
    scope: str = ""  # what the latest run measured, in words
    cells: frozenset = field(default_factory=frozenset)  # the latest run's (contract, problem, implementation)

    @property
    def label(self) -> str:
        """'main', or e.g. 'other: 5 implementations × 1 problem (8192x8192x8192) × 3 contracts, L2 flush'."""
        return "main" if self.kind == "main" else f"{self.kind}: {self.scope}"

    @property
    def key(self) -> tuple[str, str, str]:
        return self.gpu, self.spec, self.label

    @property
    def tag(self) -> str:
        """A short, stable name for the group's page: '' for the main series, else its kind and a hash of its
        label (the label is too long for a file name)."""
        if self.kind == "main":
            return ""
        return slug(f"{self.kind}-{hashlib.sha256(self.label.encode()).hexdigest()[:8]}")


def narrowing(receipt: dict) -> tuple[tuple[str, str], ...]:
    """The narrowing a receipt records (`narrowed`: {'shapes': ..., 'only': ..., ...}) as sorted pairs; () when
    it records none or predates the record."""
    value = receipt.get("narrowed")
    return tuple(sorted((str(k), str(v)) for k, v in value.items())) if isinstance(value, dict) else ()


def narrowing_text(pairs: tuple[tuple[str, str], ...]) -> str:
    """'--shapes 8192x8192x8192 --only hopper' as `run` was given it."""
    flags = []
    for key, value in pairs:
        flag = "--" + key.replace("_", "-")
        flags.append(flag if value in ("True", "true") else f"{flag} {value}")
    return " ".join(flags)


def l2_policy(run: Run) -> str:
    timing = timing_summary(run.receipt) or timing_summary(run.receipt, run.rows)  # rows: an old receipt's
    return str(timing.get("l2") or timing.get("l2_policy") or "unknown")


def is_timed(run: Run) -> bool:
    """Whether any row carries a time (a --check-only run, or one whose every row failed, has none)."""
    times = pd.to_numeric(run.table["median_ms"], errors="coerce") if "median_ms" in run.table else pd.Series([])
    return bool(np.isfinite(times.to_numpy(dtype=float)).any())


def _shard(run: Run) -> str:
    shard = run.receipt.get("shard")
    if isinstance(shard, dict) and shard.get("count"):
        return f"shard {int(shard.get('index', 0)) + 1}/{shard['count']}"
    return ""


def cells_of(run: Run) -> frozenset:
    rows = run.table
    return frozenset(zip(rows["contract"].astype(str), rows["problem"].astype(str),
                         rows["implementation"].astype(str)))


def _scope(cells: frozenset, bucket: tuple) -> str:
    contracts = {c for c, _, _ in cells}
    problems = sorted({p for _, p, _ in cells})
    impls = {i for _, _, i in cells}

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'s' if n != 1 else ''}"

    shown = f" ({', '.join(problems)})" if len(problems) <= MAX_LISTED else ""
    parts = [f"{count(len(impls), 'implementation')} × {count(len(problems), 'problem')}{shown} × "
             f"{count(len(contracts), 'contract')}", f"L2 {bucket[0]}"]
    if not bucket[1]:
        parts.append("no timed rows")
    if bucket[2]:
        parts.append(bucket[2])
    if bucket[3]:
        parts.append(narrowing_text(bucket[3]))
    return ", ".join(parts)


def group_runs(runs: list[Run]) -> list[Group]:
    """The groups of `runs` (any GPUs and specs, oldest first), each with its runs oldest first, labelled; in
    the order of their first runs."""
    groups: list[Group] = []
    latest: dict[int, frozenset] = {}  # id(group) -> its latest run's cells
    for run in runs:
        bucket = (l2_policy(run), is_timed(run), _shard(run), narrowing(run.receipt))
        cells = cells_of(run)
        fits = [g for g in groups if (g.gpu, g.spec, g.bucket) == (run.gpu, run.spec, bucket)
                and latest[id(g)] <= cells]
        if fits:  # the widest group it covers (the latest of equals): a spec that grew continues its series
            group = max(fits, key=lambda g: (len(latest[id(g)]), g.runs[-1].started_at))
            group.runs.append(run)
        else:
            group = Group(run.gpu, run.spec, [run], bucket)
            groups.append(group)
        latest[id(group)] = cells
    for g in groups:
        g.cells = latest[id(g)]
    _label(groups)
    return groups


def _label(groups: list[Group]) -> None:
    """Per GPU and spec: the widest group that was not narrowed (ties: the latest) is 'main'; a group whose
    rows are all within the main's under the same L2 policy is 'part'; a recorded narrowing is 'narrowed';
    any other group is 'other'."""
    by_spec: dict[tuple[str, str], list[Group]] = {}
    for g in groups:
        by_spec.setdefault((g.gpu, g.spec), []).append(g)
    for members in by_spec.values():
        candidates = [g for g in members if not g.bucket[3]] or members
        main = max(candidates, key=lambda g: (len(g.cells), g.runs[-1].started_at, g.runs[-1].run_id))
        for g in members:
            g.scope = _scope(g.cells, g.bucket)
            if g is main:
                g.kind = "main"
            elif g.bucket[3]:
                g.kind = "narrowed"
            elif g.bucket[0] == main.bucket[0] and g.cells <= main.cells:
                g.kind = "part"
            else:
                g.kind = "other"
        seen: dict[str, int] = {}
        for g in members:  # two groups that read alike (other rows of the same counts) are told apart by order
            seen[g.label] = seen.get(g.label, 0) + 1
            if seen[g.label] > 1:
                g.scope += f" (#{seen[g.label]})"
