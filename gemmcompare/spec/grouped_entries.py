"""A grouped problem in the `problems:` section (grouped.py; docs/grouped.md):

    - grouped: {n: 768, k: 2048, m: [128, 0, 64, 256]}
    - grouped: {n: 1536, k: 2048, routing: {tokens: 4096, top_k: 8, experts: 128, distribution: {zipf: 1.2},
                seed: 0}, layout: masked, capacity: 512}

Exactly one of `m` (each group's M, zeros allowed) and `routing` (a draw, routing.py); `groups`, when given,
must match the list's length or the routing's experts; `layout` contiguous (default) or masked; `capacity`
only with masked (default: the largest M rounded up to grouped.CAPACITY_MULTIPLE; smaller than a group's M is
an error). Every mistake is an issue at its key's line.
"""

from __future__ import annotations

import math

from ..grouped import LAYOUTS, GroupedProblem, default_capacity
from ..limits import MAX_GROUPS, MAX_ROUTING_DRAWS, exceeded
from ..routing import DISTRIBUTIONS, Routing
from .checker import MAX_DIM, _Checker, _kind
from .issues import nearest

GROUPED_KEYS = {"n", "k", "m", "routing", "groups", "layout", "capacity"}
ROUTING_KEYS = {"tokens", "top_k", "experts", "distribution", "seed"}


def grouped_problem(ck: _Checker, raw, gp: tuple) -> GroupedProblem | None:
    """The grouped problem of one `grouped:` mapping at path `gp`, or None after recording its issues."""
    raw = ck.mapping(raw, gp, "grouped")
    if raw is None:
        return None
    before = len(ck.issues)
    ck.unknown_keys(raw, GROUPED_KEYS, gp, "a grouped problem")
    dims = {}
    for d in ("n", "k"):
        if d not in raw:
            ck.error(gp, f"missing dimension {d!r} (a grouped problem has one N and one K for every group)")
        else:
            dims[d] = ck.positive_int(raw[d], gp + (d,))
    groups = ck.positive_int(raw["groups"], gp + ("groups",), "groups") if "groups" in raw else None
    routing, ms = None, None
    if ("m" in raw) == ("routing" in raw):
        ck.error(gp, "give the group Ms either as a list (m: [128, 0, 64]) or as a routing draw (routing: "
                     "{tokens, top_k, experts, distribution, seed}), exactly one of them")
    elif "m" in raw:
        ms = _m_list(ck, raw["m"], gp + ("m",), groups)
    else:
        routing = _routing(ck, raw["routing"], gp + ("routing",), groups)
    layout = raw.get("layout", "contiguous")
    if layout not in LAYOUTS:
        ck.error(gp + ("layout",), f"layout must be one of {list(LAYOUTS)}, got {layout!r}", nearest(str(layout), LAYOUTS))
        layout = None
    capacity = None
    if "capacity" in raw:
        capacity = ck.positive_int(raw["capacity"], gp + ("capacity",), "capacity")
        if layout == "contiguous":
            ck.error(gp + ("capacity",), "capacity applies to the masked layout only (say layout: masked, or drop it)")
    if len(ck.issues) > before or None in dims.values() or layout is None:
        return None
    if routing is not None:
        ms = routing.draw()
    if ms is None:
        return None
    if sum(ms) > MAX_DIM:
        ck.error(gp, f"the groups hold {sum(ms):,} rows in all, more than {MAX_DIM} (no index type we build can "
                     f"address them)")
        return None
    if layout == "masked":
        if capacity is None:
            capacity = default_capacity(ms)
        elif capacity < max(ms):
            where = f"group {ms.index(max(ms))} has M={max(ms)}"
            ck.error(gp + ("capacity",), f"capacity {capacity} is below the largest group M ({where}); every group's "
                                         f"rows must fit its capacity")
            return None
    return GroupedProblem(dims["n"], dims["k"], tuple(ms), layout, capacity or 0, routing)


def _m_list(ck: _Checker, raw, mp: tuple, groups: int | None) -> tuple[int, ...] | None:
    if not isinstance(raw, list) or not raw:
        ck.error(mp, f"m must be a non-empty list of group Ms (integers >= 0), got {_kind(raw) if raw != [] else 'an empty list'}")
        return None
    if len(raw) > MAX_GROUPS:
        ck.error(mp, exceeded(f"{len(raw):,} groups", MAX_GROUPS, "MAX_GROUPS"))
        return None
    out = []
    for i, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            ck.error(mp + (i,), f"a group's M must be an integer >= 0 (0: a group with no tokens), got {v!r}")
        elif v > MAX_DIM:
            ck.error(mp + (i,), f"a group's M of {v} is larger than {MAX_DIM}")
        else:
            out.append(v)
    if len(out) != len(raw):
        return None
    if groups is not None and groups != len(out):
        ck.error(mp, f"groups is {groups} but m lists {len(out)} group Ms")
        return None
    return tuple(out)


def _routing(ck: _Checker, raw, rp: tuple, groups: int | None) -> Routing | None:
    raw = ck.mapping(raw, rp, "routing")
    if raw is None:
        return None
    before = len(ck.issues)
    ck.unknown_keys(raw, ROUTING_KEYS, rp, "a routing draw")
    for key in ("tokens", "top_k", "experts"):
        if key not in raw:
            ck.error(rp, f"missing {key!r} (a routing draw is tokens, top_k, experts, distribution, seed)")
    tokens = _whole(ck, raw.get("tokens", 0), rp + ("tokens",), "tokens")
    top_k = ck.positive_int(raw.get("top_k", 1), rp + ("top_k",), "top_k")
    experts = ck.positive_int(raw.get("experts", 1), rp + ("experts",), "experts")
    seed = _whole(ck, raw.get("seed", 0), rp + ("seed",), "seed")
    distribution, exponent = _distribution(ck, raw.get("distribution", "balanced"), rp + ("distribution",))
    if len(ck.issues) > before:
        return None
    if experts > MAX_GROUPS:
        ck.error(rp + ("experts",), exceeded(f"{experts:,} experts (groups)", MAX_GROUPS, "MAX_GROUPS"))
        return None
    if top_k > experts:
        ck.error(rp + ("top_k",), f"top_k {top_k} is more than the {experts} experts (each token picks top_k "
                                  f"distinct experts)")
        return None
    if groups is not None and groups != experts:
        ck.error(rp + ("experts",), f"groups is {groups} but the routing draws over {experts} experts (one group "
                                    f"per expert)")
        return None
    ck.routing_draws += tokens * experts
    if ck.routing_draws > MAX_ROUTING_DRAWS:
        ck.error(rp + ("tokens",), exceeded(f"with this draw the spec's routing draws take {ck.routing_draws:,} "
                                            f"token x expert values", MAX_ROUTING_DRAWS, "MAX_ROUTING_DRAWS"))
        return None
    return Routing(tokens, top_k, experts, distribution, exponent, seed)


def _whole(ck: _Checker, v, path: tuple, what: str) -> int | None:
    """An integer >= 0 (a token count, a seed)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        ck.error(path, f"{what} must be an integer >= 0, got {v!r}")
        return None
    if v > MAX_DIM:
        ck.error(path, f"{what} {v} is larger than {MAX_DIM}")
        return None
    return v


def _distribution(ck: _Checker, v, dp: tuple) -> tuple[str, float]:
    """`balanced` or {zipf: s} with s > 0: (name, exponent)."""
    if isinstance(v, str):
        if v == "balanced":
            return "balanced", 0.0
        hint = "write {zipf: 1.2} (the exponent)" if v == "zipf" else nearest(v, DISTRIBUTIONS)
        ck.error(dp, f"unknown distribution {v!r}; expected balanced or {{zipf: s}}", hint)
        return "balanced", 0.0
    if isinstance(v, dict) and len(v) == 1 and "zipf" in v:
        s = v["zipf"]
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
            ck.error(dp + ("zipf",), f"the zipf exponent must be a finite number above 0, got {s!r}")
            return "balanced", 0.0
        return "zipf", float(s)
    ck.error(dp, f"distribution must be balanced or {{zipf: s}} (s > 0), got {v!r}",
             nearest(str(next(iter(v), "")), DISTRIBUTIONS) if isinstance(v, dict) else None)
    return "balanced", 0.0
