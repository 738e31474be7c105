"""The `contracts:` section: built-in contracts by name, or contracts defined in the spec."""

from __future__ import annotations

import re

from ..contracts.precision import BUILTIN_CONTRACTS, LAYOUTS, Epilogue, Math, Order, PrecisionContract, Scaling
from ..contracts.storage import Storage
from ..dtypes import DType, FP8_DTYPES
from .checker import _Checker, _flag, _kind, _number
from .issues import nearest

CONTRACT_KEYS = {"name", "a", "b", "c", "acc", "math", "layout", "c_order", "alpha", "beta", "epilogue", "storage",
                 "scaling", "fast_accum"}
_CONTRACT_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # fullmatch: "x\n" is not a name


def _contracts(ck: _Checker, raw) -> list[PrecisionContract]:
    path = ("contracts",)
    if raw is None:
        return []
    if isinstance(raw, (str, dict)):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        ck.error(path, "contracts must be a non-empty list of contract names or definitions")
        return []
    out, names = [], set()
    for i, item in enumerate(raw):
        ip = path + (i,)
        if isinstance(item, str):
            if item not in BUILTIN_CONTRACTS:
                ck.error(ip, f"unknown contract {item!r}; built-in contracts are named like f16_f32acc_tn, "
                             f"f32_strict_tt (see `gemmcompare list --contracts`; add _aligned for 16-byte rows), or "
                             f"define one as a mapping",
                         nearest(item, BUILTIN_CONTRACTS))
                continue
            contract = BUILTIN_CONTRACTS[item]
        elif isinstance(item, dict):
            contract = _contract_definition(ck, item, ip)
            if contract is None:
                continue
        else:
            ck.error(ip, f"a contract is a name or a mapping, got {_kind(item)}")
            continue
        if contract.name in names:
            ck.error(ip, f"contract {contract.name!r} listed twice")
            continue
        names.add(contract.name)
        out.append(contract)
    return out


def _contract_definition(ck, item, ip) -> PrecisionContract | None:
    ck.unknown_keys(item, CONTRACT_KEYS, ip, "a contract definition")
    before = len(ck.issues)
    name = item.get("name")
    if not isinstance(name, str) or not name:
        ck.error(ip, "a contract definition needs a name")
    elif not _CONTRACT_NAME.fullmatch(name):
        ck.error(ip + ("name",), f"a contract name is letters, digits, '_', '.' and '-', got {name!r}")
    elif name in BUILTIN_CONTRACTS:
        ck.error(ip + ("name",), f"{name!r} is a built-in contract; give yours another name or use the built-in")

    def dtype(key, default=None):
        v = item.get(key, default)
        try:
            return DType(v)
        except ValueError:
            ck.error(ip + (key,), f"{key} must be one of {[d.value for d in DType]}, got {v!r}", nearest(str(v), [d.value for d in DType]))
            return None

    a = dtype("a")
    b = dtype("b", item.get("a"))
    acc = dtype("acc", "f32")
    c = dtype("c", item.get("acc", "f32"))
    enum_value = _enum_value(ck)
    math = enum_value(Math, item, "math", ip, "strict")
    epilogue = enum_value(Epilogue, item, "epilogue", ip, "none")
    c_order = enum_value(Order, item, "c_order", ip, "row")
    storage = enum_value(Storage, item, "storage", ip, "tight")
    layout = item.get("layout", "tn")
    if layout not in LAYOUTS:
        ck.error(ip + ("layout",), f"layout must be tn, tt, nn or nt (t = row-major, n = column-major, A then B), got {layout!r}")
        layout = "tn"
    alpha, beta = _number(ck, item, "alpha", ip, 1.0), _number(ck, item, "beta", ip, 0.0)
    fp8 = a in FP8_DTYPES or b in FP8_DTYPES
    scaling = enum_value(Scaling, item, "scaling", ip, "tensor" if fp8 else "none")  # FP8: per tensor by default
    fast_accum = _flag(ck, item, "fast_accum", ip, False)
    if len(ck.issues) > before:
        return None
    order_a, order_b = LAYOUTS[layout]
    fields = dict(name=name, a=a, b=b, c=c, acc=acc, math=math, order_a=order_a, order_b=order_b, order_c=c_order,
                  alpha=float(alpha), beta=float(beta), epilogue=epilogue, storage=storage, scaling=scaling,
                  fast_accum=fast_accum)
    try:  # constructing it raises on a combination that cannot be (contract_problem)
        return PrecisionContract(**fields)
    except ValueError as e:
        problem = str(e).split(": ", 1)[1]
    key = ("scaling",) if "scaling" in problem and "scaling" in item else \
        ("fast_accum",) if "fast_accum" in problem and "fast_accum" in item else ()
    ck.error(ip + key, problem)
    return None


def _enum_value(ck):
    def get(enum_cls, item, key, ip, default):
        v = item.get(key, default)
        try:
            return enum_cls(v)
        except ValueError:
            options = [e.value for e in enum_cls]
            ck.error(ip + (key,), f"{key} must be one of {options}, got {v!r}", nearest(str(v), options))
            return enum_cls(default)
    return get
