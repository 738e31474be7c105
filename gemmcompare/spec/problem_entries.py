"""The `problems:` section: single problems and sweeps (value lists, ranges, pow2, ties), each bounded
before it is expanded, and grouped problems (grouped_entries.py)."""

from __future__ import annotations

import math
from typing import Sequence

from ..contracts.correctness import FIXTURES
from ..limits import MAX_PROBLEMS, exceeded
from ..problems import GemmProblem, expand_sweep, pow2_values, range_values
from .checker import _Checker, _flag, _kind
from .experiment import ProblemEntry
from .grouped_entries import grouped_problem
from .issues import nearest

PROBLEM_KEYS = {"m", "n", "k", "batch", "name", "fixtures", "time"}
SWEEP_ITEM_KEYS = {"sweep", "name", "fixtures", "time"}
GROUPED_ITEM_KEYS = {"grouped", "name", "fixtures", "time"}
DIMS = ("m", "n", "k", "batch")


def _problems(ck: _Checker, raw) -> list[ProblemEntry]:
    path = ("problems",)
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        ck.error(path, f"problems must be a non-empty list, got {_kind(raw)}")
        return []
    out: list[ProblemEntry] = []
    owner: dict[str, int] = {}  # shape label -> the problems[] entry that first produced it
    for i, item in enumerate(raw):
        ip = path + (i,)
        if ck.problem_count > MAX_PROBLEMS:
            break  # the limit is reported once
        if not isinstance(item, dict):
            ck.error(ip, f"each problem must be a mapping like {{m: 64, n: 64, k: 64}}, {{sweep: ...}} or "
                         f"{{grouped: ...}}, got {_kind(item)}")
            continue
        extras = _problem_extras(ck, item, ip)
        if "sweep" in item:
            ck.unknown_keys(item, SWEEP_ITEM_KEYS, ip, "a sweep item")
            generated = _sweep(ck, item["sweep"], ip + ("sweep",))
        elif "grouped" in item:  # one GEMM per group (spec/grouped_entries.py)
            ck.unknown_keys(item, GROUPED_ITEM_KEYS, ip, "a grouped problem item")
            grouped = grouped_problem(ck, item["grouped"], ip + ("grouped",))
            if grouped is None:
                continue
            generated = [grouped]
            ck.problem_count += 1
            if ck.problem_count > MAX_PROBLEMS:
                ck.error(ip, exceeded(f"with this entry the spec has {ck.problem_count:,} problems", MAX_PROBLEMS,
                                      "MAX_PROBLEMS"))
                break
        else:
            ck.unknown_keys(item, PROBLEM_KEYS, ip, "a problem")
            dims = {}
            for d in ("m", "n", "k"):
                if d not in item:
                    ck.error(ip, f"missing dimension {d!r}")
                else:
                    dims[d] = ck.positive_int(item[d], ip + (d,))
            batch = ck.positive_int(item.get("batch", 1), ip + ("batch",), "batch")
            if None in dims.values() or len(dims) < 3 or batch is None:
                continue
            generated = [GemmProblem(dims["m"], dims["n"], dims["k"], batch)]
            ck.problem_count += 1
            if ck.problem_count > MAX_PROBLEMS:
                ck.error(ip, exceeded(f"with this entry the spec has {ck.problem_count:,} problems", MAX_PROBLEMS,
                                      "MAX_PROBLEMS"))
                break
        for prob in generated:
            first = owner.get(prob.label)
            if first == i:  # repeated within one entry (e.g. a list naming a value twice): once is enough
                continue
            if first is not None:  # rows are keyed by shape: two entries of one shape would be ambiguous
                ck.error(ip, f"problem {prob.label} already comes from problems[{first}]; rows are keyed by "
                             f"shape, so list it once (give that entry all the fixtures it needs)")
                continue
            owner[prob.label] = i
            out.append(ProblemEntry(prob, *extras))
    return out


def _problem_extras(ck, item, ip):
    name = item.get("name")
    if name is not None and not isinstance(name, str):
        ck.error(ip + ("name",), "name must be a string")
        name = None
    fixtures = item.get("fixtures")
    if fixtures is not None:
        if not isinstance(fixtures, list) or not all(isinstance(f, str) for f in fixtures) or not fixtures:
            ck.error(ip + ("fixtures",), f"fixtures must be a non-empty list of names from {list(FIXTURES)}")
            fixtures = None
        else:
            fixtures = tuple(fixtures)
    return name, fixtures, _flag(ck, item, "time", ip, True)


def _sweep(ck: _Checker, raw, sp) -> list[GemmProblem]:
    raw = ck.mapping(raw, sp, "a sweep")
    if raw is None:
        return []
    ck.unknown_keys(raw, set(DIMS), sp, "a sweep")
    axes: dict[str, list[int]] = {}
    ties: dict[str, str] = {}
    for d in DIMS:
        if d not in raw:
            if d != "batch":
                ck.error(sp, f"missing dimension {d!r} (give values, a range, pow2, or a tie like '=m')")
            continue
        v, vp = raw[d], sp + (d,)
        if isinstance(v, str):
            src = v.strip()[1:].strip() if v.strip().startswith("=") else None
            if src is None or src not in DIMS or src == d:
                ck.error(vp, f"a string value must tie to another dimension, like '=m'; got {v!r}")
            else:
                ties[d] = src
            continue
        values = _sweep_values(ck, v, vp)
        if values is not None:
            axes[d] = values
    for d, src in ties.items():
        if src in ties:
            ck.error(sp + (d,), f"{d} ties to {src}, which is itself tied; tie to a dimension with values")
        elif src not in axes:
            ck.error(sp + (d,), f"{d} ties to {src}, which has no values")
    if ck.issues or len(axes) + len(ties) < 3:
        return []
    total = math.prod(len(values) for values in axes.values())  # counted before anything is built
    before = ck.problem_count
    ck.problem_count += total
    if ck.problem_count > MAX_PROBLEMS:
        ck.error(sp, exceeded(f"the sweep expands to {total:,} problems" + (f" (after {before:,} before it)" if before else ""),
                              MAX_PROBLEMS, "MAX_PROBLEMS"))
        return []
    return expand_sweep(axes, ties)


def _sweep_values(ck, v, vp) -> Sequence[int] | None:
    """The values of one sweep axis: a list as given, or a lazy range (its length is known without
    building it)."""
    if isinstance(v, list):
        if not v:
            ck.error(vp, "an empty list of values")
            return None
        vals = [ck.positive_int(x, vp + (i,)) for i, x in enumerate(v)]
        return None if None in vals else vals
    if isinstance(v, dict):
        if set(v) == {"range"}:
            r = v["range"]
            if not (isinstance(r, list) and len(r) in (2, 3)):
                ck.error(vp + ("range",), "range takes [start, stop] or [start, stop, step] (stop included)")
                return None
            nums = [ck.positive_int(x, vp + ("range", i), "a range bound") for i, x in enumerate(r)]
            if None in nums:
                return None
            start, stop, step = (nums + [1])[:3]
            if stop < start:
                ck.error(vp + ("range",), f"range stop {stop} is below start {start}")
                return None
            return range_values(start, stop, step)
        if set(v) == {"pow2"}:
            r = v["pow2"]
            if not (isinstance(r, list) and len(r) == 2):
                ck.error(vp + ("pow2",), "pow2 takes [lowest, highest], both powers of two, e.g. [32, 4096]")
                return None
            lo, hi = (ck.positive_int(x, vp + ("pow2", i), "a pow2 bound") for i, x in enumerate(r))
            if lo is None or hi is None:
                return None
            if lo & (lo - 1) or hi & (hi - 1) or hi < lo:
                ck.error(vp + ("pow2",), f"pow2 bounds must be powers of two with lowest <= highest, got [{lo}, {hi}]")
                return None
            return pow2_values(lo, hi)
        ck.error(vp, f"expected {{range: [start, stop, step]}} or {{pow2: [lo, hi]}}, got keys {sorted(v)}",
                 nearest(next(iter(v), ""), ["range", "pow2"]))
        return None
    val = ck.positive_int(v, vp)
    return None if val is None else [val]
