"""Collecting issues while walking the parsed spec, and the checks of values every section shares."""

from __future__ import annotations

import math

from ..limits import MAX_ISSUES
from .issues import SpecIssue, nearest

MAX_DIM = 2**31 - 1  # a dimension beyond this cannot be indexed by any kernel we build


class _Checker:
    """Collects issues while walking the parsed spec."""

    def __init__(self, file: str, lines: dict[tuple, int]):
        self.file, self.lines = file, lines
        self.issues: list[SpecIssue] = []
        self.unlisted = 0  # issues past MAX_ISSUES, counted only
        self.problem_count = 0  # problems so far, over every entry (MAX_PROBLEMS)
        self.implementation_count = 0  # implementations so far (MAX_IMPLEMENTATIONS)
        self.routing_draws = 0  # token x expert values drawn so far by grouped problems' routings (MAX_ROUTING_DRAWS)
        self.implementation_entry: dict[str, int] = {}  # implementation name -> its implementations[] index

    def line(self, path: tuple) -> int | None:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path)

    def error(self, path: tuple, message: str, hint: str | None = None):
        if len(self.issues) >= MAX_ISSUES:
            self.unlisted += 1
            return
        self.issues.append(SpecIssue(self.file, path, self.line(path), message, hint))

    def all_issues(self) -> list[SpecIssue]:
        more = [SpecIssue(self.file, (), None, f"... and {self.unlisted:,} more problems")] if self.unlisted else []
        return self.issues + more

    def unknown_keys(self, mapping: dict, allowed, path: tuple, what: str) -> None:
        for key in mapping:
            if key not in allowed:
                self.error(path + (key,), f"unknown key {key!r} in {what}; expected one of {sorted(allowed)}",
                           nearest(str(key), allowed))

    def mapping(self, value, path, what) -> dict | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"{what} must be a mapping, got {_kind(value)}")
            return None
        return value

    def positive_int(self, value, path, what="a dimension") -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"{what} must be a positive integer, got {value!r}")
            return None
        if value <= 0:
            self.error(path, f"{what} must be a positive integer, got {value}")
            return None
        if value > MAX_DIM:
            self.error(path, f"{what} {value} is larger than {MAX_DIM} (no index type we build can address it)")
            return None
        return value


def _kind(value) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", type(None): "nothing"}.get(type(value), type(value).__name__)


def _finite(v) -> bool:
    return not isinstance(v, float) or math.isfinite(v)


def _number(ck, mapping, key, path, default, *, integer=False, minimum=None, below=None):
    v = mapping.get(key, default)
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or not _finite(v):  # .nan and .inf are YAML floats: never a setting
        ck.error(path + (key,), f"{key} must be {'an integer' if integer else 'a finite number'}, got {v!r}")
        return default
    if minimum is not None and v < minimum:
        ck.error(path + (key,), f"{key} must be at least {minimum}, got {v}")
        return default
    if below is not None and v >= below:
        ck.error(path + (key,), f"{key} must be below {below}, got {v}")
        return default
    return v


def _flag(ck, mapping, key, path, default: bool) -> bool:
    """A true/false setting; anything else (YAML's "yes", 1, a string) is an error naming the key."""
    v = mapping.get(key, default)
    if not isinstance(v, bool):
        ck.error(path + (key,), f"{key} must be true or false, got {v!r}")
        return default
    return v
