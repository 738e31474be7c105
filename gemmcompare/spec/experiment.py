"""The validated spec: a frozen Experiment, its problem entries and report settings, and its row count."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..contracts.correctness import CorrectnessSettings
from ..contracts.precision import PrecisionContract
from ..contracts.timing import TimingSettings
from ..implementations.base import Implementation
from ..problems import GemmProblem


@dataclass(frozen=True)
class ProblemEntry:
    problem: GemmProblem
    name: str | None = None
    fixtures: tuple[str, ...] | None = None  # overrides correctness.fixtures for this problem
    time: bool = True  # False: correctness only

    @property
    def label(self) -> str:
        return self.problem.label


@dataclass(frozen=True)
class ReportSettings:
    plots: tuple[str, ...] = ("throughput_vs_size", "percent_of_baseline")
    threshold: float = 0.03  # `compare`: relative change below which two medians are the SAME
    across: str | None = None  # a contract every other contract's rows are compared with (report/across.py)


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    path: str
    text: str
    spec_hash: str
    problems: tuple[ProblemEntry, ...]
    contracts: tuple[PrecisionContract, ...]
    implementations: tuple[Implementation, ...]
    baseline: str | None  # the one baseline of every contract (`baseline: NAME`)
    correctness: CorrectnessSettings
    timing: TimingSettings
    report: ReportSettings = field(default_factory=ReportSettings)
    # what plan.narrow applied (('shapes', '8192x8192x8192'), ('only', 'hopper'), ...): the receipt says it, so
    # that a narrowed run is never read as a run of the whole spec
    narrowed: tuple[tuple[str, str], ...] = ()
    # (contract, implementation) pairs: each contract's own baseline (`baseline: {CONTRACT: NAME}`); when given,
    # `baseline` is None and a contract not listed has none
    baselines: tuple[tuple[str, str], ...] = ()

    def baseline_for(self, contract: str) -> str | None:
        """The implementation whose row is `contract`'s same-run baseline (its % of baseline is 100)."""
        return dict(self.baselines).get(contract) if self.baselines else self.baseline

    @property
    def baseline_names(self) -> tuple[str, ...]:
        """Every implementation that is some contract's baseline, in the spec's order."""
        return tuple(dict.fromkeys(n for _, n in self.baselines)) if self.baselines else \
            ((self.baseline,) if self.baseline else ())

    def implementations_under(self, contract: PrecisionContract) -> tuple[Implementation, ...]:
        """The implementations planned under `contract` (all but those derived from other contracts)."""
        return tuple(impl for impl in self.implementations if impl.planned_under(contract))

    @property
    def row_count(self) -> int:
        return count_rows(len(self.problems), self.contracts, self.implementations)


def count_rows(problems: int, contracts, implementations) -> int:
    """Rows of a plan: every problem under every (contract, implementation planned under it)."""
    return problems * sum(impl.planned_under(c) for c in contracts for impl in implementations)
