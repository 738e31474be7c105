"""The `implementations:` section: fixed implementations by name, parametrized families with their parameter
sweeps (one implementation per combination, per contract where the family takes its element types from
it), and entries tuned per problem."""

from __future__ import annotations

import hashlib
import itertools
import math
from pathlib import Path

from ..contracts.precision import PrecisionContract
from ..implementations import PARAMETRIZED, FIXED, instantiate
from ..implementations.base import Param, Implementation
from ..limits import MAX_IMPLEMENTATIONS, MAX_ROWS, exceeded
from .checker import _Checker
from .issues import nearest


def _implementations(ck: _Checker, raw, contracts: list[PrecisionContract], base_dir: Path) -> list[Implementation]:
    path = ("implementations",)
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        ck.error(path, "implementations must be a non-empty list")
        return []
    known = sorted(FIXED) + sorted(PARAMETRIZED)
    out: list[Implementation] = []
    owner: dict[str, tuple[int, tuple]] = {}  # name -> (entry, parameters) that first produced it
    for i, item in enumerate(raw):
        ip = path + (i,)
        if ck.implementation_count > MAX_IMPLEMENTATIONS:
            break  # the limit is reported once
        if isinstance(item, str):
            if item in FIXED:
                impls = [(FIXED[item](), ())]
                ck.implementation_count += 1
            elif item in PARAMETRIZED:  # every parameter at its default; a required one is an error here
                impls = _expand_family(ck, PARAMETRIZED[item], {}, ip, contracts, base_dir)
            else:
                ck.error(ip, f"unknown implementation {item!r}", nearest(item, known))
                continue
        elif isinstance(item, dict) and len(item) == 1:
            key, params = next(iter(item.items()))
            if key in FIXED and not params:
                impls = [(FIXED[key](), ())]
                ck.implementation_count += 1
            elif key in PARAMETRIZED:
                impls = _expand_family(ck, PARAMETRIZED[key], params, ip + (key,), contracts, base_dir)
            elif key in FIXED:
                ck.error(ip + (key,), f"{key!r} takes no parameters")
                continue
            else:
                ck.error(ip, f"unknown implementation family {key!r}", nearest(str(key), known))
                continue
        else:
            ck.error(ip, "an implementation is a name (library.cublas) or a one-key mapping "
                         "(mma_sync: {stages: [2, 3]})")
            continue
        if ck.implementation_count > MAX_IMPLEMENTATIONS:
            ck.error(ip, exceeded(f"with this entry the spec has {ck.implementation_count:,} implementations",
                                  MAX_IMPLEMENTATIONS, "MAX_IMPLEMENTATIONS"))
            break
        for impl, combo in impls:
            first = owner.get(impl.name)
            if first is None:
                owner[impl.name] = (i, combo)
                ck.implementation_entry[impl.name] = i
                out.append(impl)
            elif first[0] != i:  # rows are keyed by name: two entries of one name would be ambiguous
                ck.error(ip, f"implementation {impl.name!r} already comes from implementations[{first[0]}]; "
                             f"list it once (a custom kernel needs a name of its own)")
            elif first[1] != combo:  # one sweep giving one name to two different builds
                ck.error(ip, f"two parameter combinations of this entry are both named {impl.name!r}; the name "
                             f"must tell them apart (give each custom kernel its own entry and name)")
            # the same parameters twice within one entry (a list naming a value twice): once is enough
    return out


def _expand_family(ck: _Checker, family, params, fp: tuple, contracts: list[PrecisionContract],
                   base_dir: Path) -> list[tuple[Implementation, tuple]]:
    params = ck.mapping(params, fp, f"the parameters of {family.name}")
    if params is None:
        return []
    if TUNE_KEY in params or (params.get("config") == "auto" and family.param("config") is not None):
        return _expand_tuned(ck, family, params, fp, contracts, base_dir)
    names = [p.name for p in family.params]
    ck.unknown_keys(params, names, fp, f"the parameters of {family.name}")
    choices: list[list] = []
    for p in family.params:
        if p.name not in params:
            choices.append([p.default])
            continue
        values = _param_values(ck, p, params[p.name], fp + (p.name,), base_dir)
        choices.append(values if values else [p.default])
    if any(k not in names for k in params):
        return []
    count = math.prod(len(c) for c in choices)  # counted before any is built
    ck.implementation_count += count
    if ck.implementation_count > MAX_IMPLEMENTATIONS:
        return []  # reported by the caller
    combos = [dict(zip(names, combo)) for combo in itertools.product(*choices)]
    if family.for_contract is not None and contracts:
        return _expand_per_contract(ck, family, combos, fp, contracts)
    impls = []
    for combo in combos:
        try:
            impls.append((instantiate(family, combo), tuple(combo.values())))
        except ValueError as exc:  # the entry itself is wrong (not a sweep point that cannot work)
            ck.error(fp, str(exc))
            return []
    return impls


TUNE_KEY = "tune"


def _expand_tuned(ck: _Checker, family, params: dict, fp: tuple, contracts: list[PrecisionContract],
                  base_dir: Path) -> list[tuple[Implementation, tuple]]:
    """An entry tuned per problem (gemmcompare/tuning): `tune: auto`, `tune: {param: [values]}` or, for
    CUTLASS, `config: auto`. One TunedImplementation per combination of its other parameters (and per
    contract where the family takes element types from it), holding every candidate."""
    from ..tuning.tuned import MAX_CANDIDATES, TunedImplementation, auto_grid

    params = dict(params)
    raw = params.pop(TUNE_KEY, None)
    if params.get("config") == "auto":
        if raw is not None:
            ck.error(fp + (TUNE_KEY,), "give `config: auto` or `tune`, not both")
            return []
        params.pop("config")
        raw = "auto"
    tp = fp + (TUNE_KEY,)
    if raw == "auto":
        grid, grid_text = auto_grid(family.name, params), "auto"
        if grid is None:
            ck.error(tp, f"{family.name} has no grid of its own to tune over: list the values, e.g. "
                         f"tune: {{{family.params[0].name}: [...]}}")
            return []
    elif isinstance(raw, dict) and raw:
        grid = {}
        for key, values in raw.items():
            p = family.param(key)
            if p is None:
                ck.error(tp + (key,), f"{family.name} has no parameter {key!r} to tune",
                         nearest(str(key), [q.name for q in family.params]))
                return []
            if key in params:
                ck.error(tp + (key,), f"{key} is both fixed ({key}: ...) and tuned (tune: {{{key}: ...}}): give it once")
                return []
            got = _param_values(ck, p, values, tp + (key,), base_dir)
            if not got:
                return []
            grid[key] = got
        digest = hashlib.sha256(repr(sorted(grid.items())).encode()).hexdigest()[:6]
        grid_text = "+".join(grid) + "@" + digest  # two entries tuning the same parameters over other values
    else:
        ck.error(tp, f"tune must be `auto` or a mapping of parameter -> list of values, got {raw!r}")
        return []
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    if raw != "auto" and len(points) > MAX_CANDIDATES:  # auto: the catalog's or the family's own grid
        ck.error(tp, f"{len(points)} candidates to tune over; at most {MAX_CANDIDATES} (each is a build): "
                     f"list fewer values")
        return []
    fixed_combos = _expand_family(ck, family, params, fp, [], base_dir) if params else [(None, ())]
    if not fixed_combos:
        return []
    names = [p.name for p in family.params]
    combos = [dict(zip(names, values)) if values else {} for _, values in fixed_combos]
    per_contract = family.for_contract is not None and contracts
    made: dict[str, tuple[Implementation, tuple, set]] = {}
    for combo in combos:
        for contract in (contracts if per_contract else [None]):
            shape = (lambda d: family.for_contract(d, contract)) if contract is not None else (lambda d: d)
            try:
                candidates = [instantiate(family, shape({**combo, **point})) for point in points]
            except ValueError as exc:
                ck.error(fp, str(exc))
                return []
            # in the name: what the entry gave and what the contract filled in (not every default)
            fixed = {k: v for k, v in shape(dict(combo)).items()
                     if v is not None and k not in grid and (k in params or combo.get(k) != v)}
            tuned = TunedImplementation(family.name, fixed, tuple(grid), grid_text, candidates)
            entry = made.setdefault(tuned.name, (tuned, tuple(sorted(fixed.items(), key=str)), set()))
            if contract is not None:
                entry[2].add(contract.name)
    every = {c.name for c in contracts}
    for tuned, _, bound in made.values():
        tuned.derived_for = None if not per_contract or bound >= every else frozenset(bound)
    return [(tuned, combo) for tuned, combo, _ in made.values()]


def _expand_per_contract(ck: _Checker, family, combos: list[dict], fp: tuple,
                         contracts: list[PrecisionContract]) -> list[tuple[Implementation, tuple]]:
    """Each combination as `family.for_contract` makes it under each contract: one implementation per
    distinct result (equal names are one implementation), planned under the contracts it came from only
    (`derived_for`; None when that is every contract: then it is planned as any other)."""
    if len(combos) * len(contracts) > MAX_ROWS:  # each (combination, contract) is at least one row
        ck.error(fp, exceeded(f"{len(combos):,} parameter combinations x {len(contracts)} contracts",
                              MAX_ROWS, "MAX_ROWS"))
        return []
    derived: dict[tuple, set[str]] = {}  # parameters under a contract -> the contracts that gave them
    for combo in combos:
        for contract in contracts:
            params = family.for_contract(combo, contract)
            derived.setdefault(tuple(params.items()), set()).add(contract.name)
    ck.implementation_count += len(derived) - len(combos)
    if ck.implementation_count > MAX_IMPLEMENTATIONS:
        return []  # reported by the caller
    impls: dict[str, tuple[Implementation, tuple]] = {}
    bindings: dict[str, set[str]] = {}
    for key, bound in derived.items():
        try:
            impl = instantiate(family, dict(key))
        except ValueError as exc:  # the entry itself is wrong (not a sweep point that cannot work)
            ck.error(fp, str(exc))
            return []
        # equal names are one configuration (e.g. f16 named by the spec, and f16 from an f16 contract)
        impls.setdefault(impl.name, (impl, tuple(v for _, v in key)))
        bindings.setdefault(impl.name, set()).update(bound)
    every = {c.name for c in contracts}
    for name, (impl, _) in impls.items():
        impl.derived_for = None if bindings[name] >= every else frozenset(bindings[name])
    return list(impls.values())


def _param_values(ck: _Checker, p: Param, raw, pp: tuple, base_dir: Path) -> list | None:
    """The list of values a parameter takes (one value, or several for a sweep)."""

    def one(v, vp):
        if p.kind == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                ck.error(vp, f"{p.name} must be an integer, got {v!r}")
                return None
        elif p.kind == "choice":
            if v not in p.choices:
                ck.error(vp, f"{p.name} must be one of {list(p.choices)}, got {v!r}", nearest(str(v), [str(c) for c in p.choices]))
                return None
        elif p.kind == "shape":
            if not (isinstance(v, list) and len(v) == p.length and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)):
                ck.error(vp, f"{p.name} must be a list of {p.length} positive integers, got {v!r}")
                return None
            v = tuple(v)
        elif p.kind == "str":
            if not isinstance(v, str):
                ck.error(vp, f"{p.name} must be a string, got {v!r}")
                return None
        elif p.kind == "path":
            if not isinstance(v, str):
                ck.error(vp, f"{p.name} must be a file path, got {v!r}")
                return None
            v = str((base_dir / v).resolve())
        elif p.kind == "list":  # a list is one value (e.g. compiler flags)
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                ck.error(vp, f"{p.name} must be a list of strings, got {v!r}")
                return None
            v = tuple(v)
        elif p.kind == "paths":  # a list of files, resolved against the spec's folder, must exist
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
                ck.error(vp, f"{p.name} must be a list of file paths, got {v!r}")
                return None
            resolved = []
            for i, x in enumerate(v):
                path = (base_dir / x).resolve()
                if not path.is_file():
                    ck.error(vp + (i,), f"file not found: {x} (resolved against {base_dir.resolve()} to {path})")
                    return None
                resolved.append(str(path))
            v = tuple(resolved)
        elif p.kind == "callable":  # 'file.py:function', the file resolved against the spec's folder
            file, sep, func = v.rpartition(":") if isinstance(v, str) else ("", "", "")
            if not sep or not file or not func.isidentifier():
                ck.error(vp, f"{p.name} must be 'file.py:function', got {v!r}")
                return None
            path = (base_dir / file).resolve()
            if not path.is_file():
                ck.error(vp, f"module file not found: {file} (resolved against {base_dir.resolve()} to {path})")
                return None
            v = f"{path}:{func}"
        elif p.kind == "mapping":
            if not isinstance(v, dict):
                ck.error(vp, f"{p.name} must be a mapping, got {v!r}")
                return None
            v = tuple(sorted(v.items()))
        if p.validate is not None:
            problem = p.validate(v)
            if problem:
                ck.error(vp, problem)
                return None
        return v

    is_sweep = isinstance(raw, list) and (p.kind not in ("shape", "list", "paths") or (raw and isinstance(raw[0], list)))
    if p.kind in ("list", "paths"):
        is_sweep = isinstance(raw, list) and bool(raw) and all(isinstance(x, list) for x in raw)
    if is_sweep:
        if not raw:
            ck.error(pp, f"an empty list of values for {p.name}")
            return None
        values = [one(v, pp + (i,)) for i, v in enumerate(raw)]
        return None if any(v is None for v in values) else values
    v = one(raw, pp)
    return None if v is None else [v]
