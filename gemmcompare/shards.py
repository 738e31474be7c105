"""Splitting a plan's work: whole groups (problem x contract), costliest first, and shards of a plan.

A group is never split: its implementations are measured on one GPU with the baseline, so every % of
baseline compares two rows of one GPU in one run. Two uses:

- the order groups are handed out to several GPUs (`by_cost`): the costliest first, so that the last
  groups to finish are short and no GPU idles long at the end (longest-processing-time-first);
- `--shard i/N`: the same greedy split done once, statically, over the whole plan (`assign`). It depends
  on nothing but the plan, so every host of a job array computes the same split and runs its part
  alone; `gemmcompare merge` joins the parts.

The cost is an estimate for balancing only, never reported: per implementation that will run, a fixed
part (checking, warm-up, the minimum samples) plus the problem's FLOPs.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .errors import UsageError
from .implementations.base import Skip
from .plan import Cell, Group, Plan

GroupKey = tuple[int, str]  # (problem index, contract name)

# The fixed part of an implementation's cost, in FLOPs of work. From the H200 sweep of SM90 configurations
# (release build): about 0.1 s per implementation at 2048^3 and 0.4 s at 8192^3, i.e. 0.095 s + 2.8e-13
# s per FLOP; the ratio of the two is 3.4e11 FLOPs.
FIXED_COST_FLOPS = 3e11
UNTIMED_SHARE = 0.2  # a correctness-only problem (time: false) is checked, never timed


@dataclass(frozen=True)
class Shard:
    index: int  # 0-based, as Slurm's SLURM_ARRAY_TASK_ID and Kubernetes' JOB_COMPLETION_INDEX count
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def as_dict(self) -> dict:
        return {"index": self.index, "count": self.count}


_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def parse_shard(text: str) -> Shard:
    m = _SHARD.fullmatch(text or "")
    if not m:
        raise UsageError(f"--shard {text!r}: expected I/N, e.g. 0/4 (shards are counted from 0)")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or index >= count:
        raise UsageError(f"--shard {text!r}: need 0 <= I < N (shards are counted from 0: 0/{max(count, 1)} "
                         f"is the first of {max(count, 1)})")
    return Shard(index, count)


def group_key(cell_or_group: Cell | Group) -> GroupKey:
    return (cell_or_group.problem_index, cell_or_group.contract.name)


def cell_groups(plan: Plan) -> dict[GroupKey, list[Cell]]:
    """Every group of the plan (done or not) with its cells, in plan order."""
    out: dict[GroupKey, list[Cell]] = {}
    for cell in plan.cells:
        out.setdefault(group_key(cell), []).append(cell)
    return out


def cost(cells: list[Cell]) -> float:
    """Estimated measuring cost of one group (the units are arbitrary: only ratios matter)."""
    runnable = sum(1 for c in cells if not isinstance(c.support, Skip))
    if not runnable:
        return 1.0  # SKIP rows only: written at once
    entry = cells[0].entry
    per_impl = FIXED_COST_FLOPS + entry.problem.flops
    return runnable * per_impl * (1.0 if entry.time else UNTIMED_SHARE)


def ranked(plan: Plan) -> list[tuple[GroupKey, float]]:
    """Every group of the plan with its cost, the costliest first; equal costs keep plan order (so the
    order is deterministic)."""
    costs = {key: cost(cells) for key, cells in cell_groups(plan).items()}
    return sorted(costs.items(), key=lambda kv: -kv[1])  # stable: ties stay in plan order


def by_cost(plan: Plan, groups: list[Group]) -> list[Group]:
    """`groups` in the order of `ranked`."""
    rank = {key: i for i, (key, _) in enumerate(ranked(plan))}
    return sorted(groups, key=lambda g: rank[group_key(g)])


def assign(plan: Plan, count: int) -> dict[GroupKey, int]:
    """Each group's shard: costliest first, each to the shard with the least cost so far (the lowest
    index on a tie). Deterministic: the same plan gives the same split on every host."""
    if count < 1:
        raise UsageError(f"cannot split into {count} shards")
    load = [0.0] * count
    out: dict[GroupKey, int] = {}
    for key, group_cost in ranked(plan):
        target = min(range(count), key=lambda s: (load[s], s))
        out[key] = target
        load[target] += group_cost
    return out


def shard_plan(plan: Plan, shard: Shard) -> Plan:
    """The plan of one shard: the same experiment, only the cells of the shard's groups."""
    where = assign(plan, shard.count)
    return dataclasses.replace(plan, cells=tuple(c for c in plan.cells if where[group_key(c)] == shard.index))
