"""Checking result rows and receipts read back (from a store, a run folder, a results.json or .csv) before
anything is computed from them.

A figure that cannot be a measurement (a time that is NaN, infinite, zero or negative; a rate or a spread
that is infinite or negative; an error below zero), a status that is none of ours, a receipt that is not a
mapping, or a missing key column is an InputError (exit 2) naming the file, the row and the column: never
a verdict or a plot computed from it, and never a traceback. A value that is absent (None, an empty CSV
cell) stays allowed: a SKIP row has no times, an old file lacks newer columns.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pandas loads only where rows are read: validating a spec needs none of it
    import pandas as pd

from ..errors import InputError
from ..results import Status

KEY_COLUMNS = ("problem", "contract", "implementation", "status")
TIME_COLUMNS = ("median_ms", "mean_ms", "min_ms", "max_ms")  # finite and above 0
SPREAD_COLUMNS = ("stdev_ms", "iqr_ms", "cv", "median_ci_rel")  # finite, 0 or above
RATE_COLUMNS = ("tflops", "executed_tflops", "pct_of_baseline", "peak_tflops", "pct_of_peak")  # finite, 0 or above
ERROR_COLUMNS = ("max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig", "worst_bound_ratio")  # >= 0
FIGURE_COLUMNS = TIME_COLUMNS + SPREAD_COLUMNS + RATE_COLUMNS
STATUSES = {s.value for s in Status}
MAX_LISTED = 5  # problems named in one message


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _number(v: Any) -> float | None:
    """v as a float, or None when it is not a number at all."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(v)  # numpy scalars, numeric text from a CSV
    except (TypeError, ValueError):
        return None


def _value_problem(col: str, v: Any) -> str | None:
    """What is wrong with one present value of a figure column, or None."""
    x = _number(v)
    if x is None:
        return f"{col} is {v!r}, not a number"
    if col in ERROR_COLUMNS:
        return None if x >= 0 else f"{col} is {x!r}: an error is 0 or above"  # +inf: beyond a zero tolerance
    if not math.isfinite(x):
        return f"{col} is {x!r}: a measurement is a finite number"
    if col in TIME_COLUMNS and x <= 0:
        return f"{col} is {x!r}: a time is above 0 ms"
    if x < 0:
        return f"{col} is {x!r}: it cannot be negative"
    return None


def _samples_problem(v: Any) -> str | None:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return f"samples_ms is not a JSON list: {v[:40]!r}"
    if not isinstance(v, list):
        return f"samples_ms is {type(v).__name__}, not a list of times"
    for x in v:
        t = _number(x)
        if t is None or not math.isfinite(t) or t <= 0:
            return f"samples_ms holds {x!r}: every sample is a time above 0 ms, finite"
    return None


def _row_name(i: int, rec: dict) -> str:
    parts = [str(rec.get(c)) for c in ("problem", "contract", "implementation") if not _missing(rec.get(c))]
    return f"row {i + 1}" + (f" ({', '.join(parts)})" if parts else "")


def _raise(where: str, problems: list[str]) -> None:
    if problems:
        more = "; ... and more" if len(problems) > MAX_LISTED else ""
        raise InputError(f"{where}: " + "; ".join(problems[:MAX_LISTED]) + more)


def check_receipt(receipt: Any, where: str) -> dict:
    """The receipt, if it is a mapping (None reads as empty)."""
    if receipt is None:
        return {}
    if not isinstance(receipt, dict):
        raise InputError(f"{where}: the receipt is {type(receipt).__name__}, not a mapping of fields")
    return receipt


def check_records(records: Any, where: str) -> list[dict]:
    """The rows of a results.json as parsed: a list of mappings whose figures are finite numbers where
    present (in JSON a NaN is written out; once in a table it would look like an absent value)."""
    if not isinstance(records, list):
        raise InputError(f"{where}: 'results' is {type(records).__name__}, not a list of rows")
    problems = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            problems.append(f"row {i + 1} is {type(rec).__name__}, not a mapping")
            continue
        for col in FIGURE_COLUMNS:
            v = rec.get(col)
            if isinstance(v, float) and math.isnan(v):
                problems.append(f"{_row_name(i, rec)}: {col} is nan: a measurement is a finite number")
    _raise(where, problems)
    return records


def check_rows(rows: pd.DataFrame, where: str) -> pd.DataFrame:
    """The rows, after checking key columns, statuses, samples and figures (InputError naming each problem)."""
    lacking = [c for c in KEY_COLUMNS if c not in rows.columns]
    if lacking:
        have = ", ".join(map(str, list(rows.columns)[:8])) or "none"
        raise InputError(f"{where}: not gemmcompare results: no column(s) {lacking} (columns: {have})")
    problems: list[str] = []
    records: Iterable[dict] = rows.to_dict("records")
    for i, rec in enumerate(records):
        name = _row_name(i, rec)
        for col in ("problem", "contract", "implementation"):
            if _missing(rec[col]) or str(rec[col]).strip() == "":
                problems.append(f"{name}: no {col}")
        status = rec["status"]
        if not isinstance(status, str) or status.strip().upper() not in STATUSES:
            problems.append(f"{name}: status {status!r} is not one of {sorted(STATUSES)}")
        if "samples_ms" in rec and not _missing(rec["samples_ms"]):
            problem = _samples_problem(rec["samples_ms"])
            if problem:
                problems.append(f"{name}: {problem}")
        for col in FIGURE_COLUMNS + ERROR_COLUMNS:
            v = rec.get(col)
            if not _missing(v):
                problem = _value_problem(col, v)
                if problem:
                    problems.append(f"{name}: {problem}")
        if len(problems) > MAX_LISTED:
            break
    _raise(where, problems)
    return rows
