"""Measuring one commit for `gemmcompare bisect`: the interface the search uses, and the real measurer,
one `gemmcompare run` process per commit.

A step's run is the spec at that commit (its `custom` and `python` sources are paths relative to the spec,
so the scratch worktree's copy measures that commit's kernels), narrowed to the watched rows, the baseline
always among them (% of the same-run baseline is how a verdict tells a kernel's change from the GPU's
power state). The harness itself (contracts, timing, built-in implementations) is this gemmcompare at
every step. Each step writes its own run folder and log under the output folder, and its rows to one
store there; builds go through the usual cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import gemmcompare

from ..errors import InputError, NoDeviceError
from .git import Commit

SPEC_FAMILIES = ("custom.", "python.")  # implementations whose code the spec names by path: they follow the commit


@dataclass
class Watch:
    """The rows a bisect watches: a regular expression on implementation names (the baseline always
    matches), the problems (--shapes), and what the spec at the good commit said about them."""

    only: str | None = None
    shapes: str | None = None
    baseline: str | None = None
    implementations: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    baselines: tuple[str, ...] = ()  # every contract's baseline (the one `baseline`, or one per contract)

    @property
    def baseline_names(self) -> tuple[str, ...]:
        """The baselines' implementation names: `baselines`, else the one `baseline` of a Watch made without them."""
        return self.baselines or ((self.baseline,) if self.baseline else ())

    @property
    def regex(self) -> str | None:
        """--only for every step's run: the user's expression, or a baseline by its exact name."""
        if self.only is None:
            return None
        names = self.baseline_names
        return "|".join([f"(?:{self.only})", *(f"^{re.escape(n)}$" for n in names)]) if names else self.only


@dataclass
class Measurement:
    """One commit measured: its run (receipt, rows) or why there is none."""

    commit: Commit
    run: tuple | None = None  # (receipt, rows DataFrame), as compare() takes it
    run_dir: Path | None = None
    log: Path | None = None
    failure: str = ""  # why there is no run ('' when there is one)
    spec_invalid: bool = False  # the spec could not be read at this commit (exit 2 of the run)


class Measurer(Protocol):
    def prepare(self, spec: Path, watch: Watch) -> Watch:
        """Check the spec (at the good commit) and the watched rows before anything is measured; raise
        SpecError or InputError (exit 2) when they cannot work; return the Watch with what was found."""

    def measure(self, commit: Commit, spec: Path) -> Measurement:
        """Run the watched rows of `spec` (in the worktree at `commit`)."""


def check_watch(spec: Path, watch: Watch) -> Watch:
    """The spec read as `gemmcompare run` reads it, narrowed as every step will be: a SpecError or
    InputError (exit 2) when it is invalid, when --only matches nothing, or matches only the baseline."""
    from ..plan import narrow
    from ..spec import load_spec

    exp = load_spec(spec)
    baseline = exp.baseline or ", ".join(exp.baseline_names) or None  # one name, or each contract's
    watch = Watch(watch.only, watch.shapes, baseline, (), list(watch.notes), exp.baseline_names)
    narrow(exp, watch.shapes, False, watch.only)  # --only matching nothing is named as `run` names it
    names = [i.name for i in narrow(exp, watch.shapes, False, watch.regex).implementations]
    judged = [n for n in names if n not in exp.baseline_names]
    if not judged:
        raise InputError(f"--only {watch.only!r} matches only the baseline {baseline} of {spec.name}: name the "
                         f"kernel to watch (the spec has {[i.name for i in exp.implementations]})")
    if not baseline:
        watch.notes.append(f"{spec.name} names no baseline: times are judged without a same-run baseline, so a "
                           f"change of the GPU's power state can read as a slowdown (add `baseline: library.cublas`)")
    fixed = [n for n in judged if not n.startswith(SPEC_FAMILIES)]
    if fixed:
        watch.notes.append(f"{', '.join(fixed)}: built into gemmcompare, so the same code at every commit (only "
                           f"the sources a spec names by path, custom and python, change with the commit)")
    watch.implementations = tuple(names)
    return watch


class RunCommand:
    """The real measurer: `python -m gemmcompare run SPEC` in a process of its own for each commit (a crash
    or a hang stays that run's), its rows in OUT/bisect.db and its folder under OUT/steps/<commit>/."""

    def __init__(self, out: Path, *, cache_dir: str | None = None, arch: str | None = None,
                 jobs: int | None = None):
        self.out = Path(out)
        self.options = []
        cache_dir = str(Path(cache_dir).absolute()) if cache_dir else None  # each run starts in its worktree
        for flag, value in (("--cache-dir", cache_dir), ("--arch", arch), ("--jobs", jobs)):
            if value is not None:
                self.options += [flag, str(value)]
        self.watch = Watch()

    def prepare(self, spec: Path, watch: Watch) -> Watch:
        self.watch = check_watch(spec, watch)
        return self.watch

    def measure(self, commit: Commit, spec: Path) -> Measurement:
        step = self.out / "steps" / commit.short
        runs = step / "runs"
        step.mkdir(parents=True, exist_ok=True)
        log = step / "run.log"
        cmd = [sys.executable, "-m", "gemmcompare", "run", str(spec), "--store", str(self.out / "bisect.db"),
               "--runs-dir", str(runs), "--no-report", "--no-progress", *self.options]
        if self.watch.regex:
            cmd += ["--only", self.watch.regex]
        if self.watch.shapes:
            cmd += ["--shapes", self.watch.shapes]
        # this gemmcompare in every step, whatever the worktree holds
        here = str(Path(gemmcompare.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}
        with open(log, "w") as out:
            out.write(" ".join(cmd) + "\n")
            out.flush()
            rc = subprocess.run(cmd, cwd=spec.parent, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
        text = log.read_text(errors="replace")
        if rc == 130:
            raise KeyboardInterrupt
        if rc == 3:
            raise NoDeviceError(f"no CUDA device: bisect measures every commit on a GPU (log: {log})")
        if rc == 2:
            return Measurement(commit, log=log, spec_invalid=True,
                               failure=f"the spec cannot be run at this commit: {_tail(text)}")
        folders = sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime) \
            if runs.is_dir() else []
        if not folders:
            return Measurement(commit, log=log, failure=f"`gemmcompare run` exited {rc} without a run: {_tail(text)}")
        from ..store.sources import SourceError, load_source

        try:
            source = load_source(str(folders[-1]))
        except SourceError as exc:
            return Measurement(commit, log=log, failure=f"its run cannot be read: {exc}")
        return Measurement(commit, (source.receipt, source.rows), folders[-1], log)


def _tail(text: str, lines: int = 3) -> str:
    kept = [line.strip() for line in text.strip().splitlines()[1:] if line.strip()]
    return " | ".join(kept[-lines:])[:400] or "(no output)"
