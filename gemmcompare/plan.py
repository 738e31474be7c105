"""The plan of a run: an experiment expanded into cells, one per (problem, contract, implementation),
each either runnable or a SKIP with the reason, in the order a run measures them.

The unit of measuring is a *group*: one problem under one contract with the implementations that run it
(inputs and references are made once per group, and its implementations are timed interleaved). Rows
are keyed by (problem label, contract name, implementation name) everywhere: the store, --resume,
compare.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import Iterator

from .contracts.precision import PrecisionContract
from .contracts.timing import L2_POLICIES
from .errors import InputError
from .limits import MAX_PROBLEMS, MAX_ROWS, exceeded
from .implementations.base import Implementation, Skip, Support
from .problems import GemmProblem
from .spec import MAX_DIM, Experiment, ProblemEntry
from .spec.issues import nearest
from .spec.settings import ENERGY_BATCHES

RowKey = tuple[str, str, str]  # (problem label, contract name, implementation name)


@dataclass(frozen=True)
class Cell:
    problem_index: int
    entry: ProblemEntry
    contract: PrecisionContract
    implementation: Implementation
    support: Support  # Ok, or Skip(reason): known before anything is built (the device may add more)

    @property
    def key(self) -> RowKey:
        return (self.entry.label, self.contract.name, self.implementation.name)


@dataclass(frozen=True)
class Group:
    """One problem under one contract: what a measuring worker does in one job."""

    problem_index: int
    entry: ProblemEntry
    contract: PrecisionContract
    implementations: tuple[Implementation, ...]


@dataclass(frozen=True)
class Plan:
    experiment: Experiment
    cells: tuple[Cell, ...]

    @property
    def row_count(self) -> int:
        return len(self.cells)

    def skips(self) -> dict[str, int]:
        """'implementation under contract: reason' -> how many rows will be SKIP for it."""
        counts: dict[str, int] = {}
        for cell in self.cells:
            if isinstance(cell.support, Skip):
                key = f"{cell.implementation.name} under {cell.contract.name}: {cell.support.reason}"
                counts[key] = counts.get(key, 0) + 1
        return counts

    def groups(self, done: set[RowKey] = frozenset()) -> Iterator[Group]:
        """The groups still to measure, in order, leaving out rows already `done` (--resume)."""
        current: list[Cell] = []
        for cell in self.cells:
            if current and (cell.problem_index, cell.contract.name) != (current[0].problem_index, current[0].contract.name):
                yield from _group(current, done)
                current = []
            current.append(cell)
        if current:
            yield from _group(current, done)


def _group(cells: list[Cell], done: set[RowKey]) -> Iterator[Group]:
    todo = tuple(c.implementation for c in cells if c.key not in done)
    if todo:
        first = cells[0]
        yield Group(first.problem_index, first.entry, first.contract, todo)


def make_plan(exp: Experiment) -> Plan:
    cells = []
    for index, entry in enumerate(exp.problems):
        for contract in exp.contracts:
            for impl in exp.implementations_under(contract):  # none derived from another contract's types
                cells.append(Cell(index, entry, contract, impl, impl.admits(entry.problem, contract)))
    return Plan(exp, tuple(cells))


# -- narrowing an experiment (quick checks, sanitizers, profilers) ---------------------------------------

_SHAPE = re.compile(r"\s*([0-9]{1,10})x([0-9]{1,10})x([0-9]{1,10})\s*")


def parse_shapes(text: str) -> tuple[ProblemEntry, ...]:
    """'MxNxK[,MxNxK...]' -> problem entries (each shape once)."""
    entries: list[ProblemEntry] = []
    seen: set[str] = set()
    parts = text.split(",")
    if len(parts) > MAX_PROBLEMS:
        raise InputError("--shapes: " + exceeded(f"{len(parts):,} shapes", MAX_PROBLEMS, "MAX_PROBLEMS"))
    for part in parts:
        m = _SHAPE.fullmatch(part)
        if not m or not all(1 <= int(d) <= MAX_DIM for d in m.groups()):
            raise InputError(f"--shapes: {part[:40]!r} is not MxNxK with integers from 1 to {MAX_DIM}")
        entry = ProblemEntry(GemmProblem(*map(int, m.groups())))
        if entry.label not in seen:
            seen.add(entry.label)
            entries.append(entry)
    return tuple(entries)


def check_l2(policy: str) -> str:
    """An --l2 value: one of the timing contract's L2 policies, or an InputError (exit 2) that lists them."""
    if policy in L2_POLICIES:
        return policy
    close = nearest(str(policy), L2_POLICIES)
    hint = f" (did you mean {close}?)" if close else ""
    raise InputError(f"--l2 {str(policy)[:40]!r} is not an L2 policy: expected one of {', '.join(L2_POLICIES)}{hint}")


def narrow(exp: Experiment, shapes: str | None = None, check_only: bool = False, only: str | None = None,
           l2: str | None = None, energy: bool = False, oracle: bool = False,
           contracts: str | None = None) -> Experiment:
    """The experiment with other problem shapes, without timing, with fewer implementations, or under another
    L2 policy (`l2`: as if the spec's `timing: {l2: ...}` said it; the rows, the receipt and the tuning pick
    cache's key all read exp.timing.l2), or with energy measured (`energy`: as if it said `timing: {energy:
    true}`; a spec that measures energy already keeps its own batching), or with every tuned row's candidates
    measured in full (`oracle`: as if it said `timing: {oracle: true}`), or under fewer of its contracts
    (`contracts`: comma-separated names, each one of the spec's). A narrowed experiment gets its own spec hash, so
    --resume cannot mix it with the full one; an `l2` equal to the spec's own policy changes nothing, the hash
    neither."""
    other_l2 = l2 is not None and check_l2(l2) != exp.timing.l2
    if other_l2:
        exp = dataclasses.replace(exp, timing=dataclasses.replace(exp.timing, l2=l2))
    more_energy = energy and not exp.timing.energy_batches
    if more_energy:
        exp = dataclasses.replace(exp, timing=dataclasses.replace(exp.timing, energy_batches=ENERGY_BATCHES))
    more_oracle = oracle and not exp.timing.oracle
    if more_oracle:
        exp = dataclasses.replace(exp, timing=dataclasses.replace(exp.timing, oracle=True))
    if shapes:
        exp = dataclasses.replace(exp, problems=parse_shapes(shapes))
    if contracts:
        exp = _only_contracts(exp, contracts)
    if check_only:
        exp = dataclasses.replace(exp, problems=tuple(dataclasses.replace(e, time=False) for e in exp.problems))
    if shapes or check_only or only or other_l2 or more_energy or more_oracle or contracts:
        tag = f"{exp.spec_hash}|shapes={shapes}|check_only={check_only}|only={only}"
        if contracts:  # only then, as l2 below
            tag += f"|contracts={contracts}"
        if other_l2:  # only then: the hashes of runs narrowed without it stay as they were (--resume)
            tag += f"|l2={l2}"
        if more_energy:  # likewise
            tag += "|energy=true"
        if more_oracle:
            tag += "|oracle=true"
        given = {"shapes": shapes, "check_only": "true" if check_only else None, "only": only,
                 "l2": l2 if other_l2 else None, "energy": "true" if more_energy else None,
                 "oracle": "true" if more_oracle else None, "contracts": contracts}
        narrowed = tuple(sorted({**dict(exp.narrowed), **{k: str(v) for k, v in given.items() if v}}.items()))
        exp = dataclasses.replace(exp, spec_hash=hashlib.sha256(tag.encode()).hexdigest(), narrowed=narrowed)
    if only:
        try:
            rx = re.compile(only)
        except re.error as exc:
            raise InputError(f"--only {only!r} is not a regular expression: {exc}") from None
        kept = tuple(i for i in exp.implementations if rx.search(i.name))
        if not kept:
            raise InputError(f"--only {only!r} matches none of {[i.name for i in exp.implementations]}")
        names = {i.name for i in kept}
        exp = dataclasses.replace(exp, implementations=kept,
                                  baseline=exp.baseline if exp.baseline in names else None,
                                  baselines=tuple((c, n) for c, n in exp.baselines if n in names))
    rows = exp.row_count
    if rows > MAX_ROWS:
        raise InputError("--shapes: " + exceeded(f"{rows:,} rows", MAX_ROWS, "MAX_ROWS"))
    return exp


def _only_contracts(exp: Experiment, names: str) -> Experiment:
    """The experiment under the named contracts only (--contract A,B), each one of the spec's: exit 2 naming the
    spec's contracts otherwise. A contract's own baseline goes with it."""
    have = [c.name for c in exp.contracts]
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise InputError(f"--contract {names!r} names no contract; the spec has {have}")
    for n in wanted:
        if n not in have:
            hint = nearest(n, have)
            raise InputError(f"--contract: {n!r} is not one of the spec's contracts {have}"
                             + (f" (did you mean {hint!r}?)" if hint else ""))
    kept = tuple(c for c in exp.contracts if c.name in wanted)
    return dataclasses.replace(exp, contracts=kept,
                               baselines=tuple((c, n) for c, n in exp.baselines if c in wanted))
