"""Shared helpers for reports and comparisons: tidy result rows, read receipts, name things for display.

Rows arrive from three places (the SQLite store, a run folder's results.json, a committed results.csv) with
slightly different types (booleans as 0/1 or "True", JSON columns as text or objects, missing columns in
old files). `normalise_rows` gives every consumer the same frame.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable

import pandas as pd

from ..receipt import gpu_name, receipt_value  # noqa: F401  (re-exported for report modules)
from ..results import COLUMNS, JSON_COLUMNS

NUMERIC_COLUMNS = [
    "m", "n", "k", "batch", "max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig",
    "worst_bound_ratio", "median_ms", "mean_ms", "min_ms", "max_ms", "stdev_ms", "cv", "iqr_ms", "median_ci_rel",
    "n_samples", "flops", "executed_flops", "tflops", "executed_tflops", "pct_of_baseline", "peak_tflops",
    "pct_of_peak", "unique_bytes", "registers", "smem_bytes", "spill_stores", "spill_loads", "stack_bytes",
    "build_seconds", "throttled_fraction", "predicted_ms", "predicted_tflops", "occupancy_ctas_per_sm", "occupancy",
    "wave_efficiency", "measured_over_predicted", "lda", "ldb", "ldc", "sm_clock_mhz", "max_sm_clock_mhz",
    "median_ms_at_max_clock",
]
_JSON_DEFAULTS = {"params": dict, "checks": list, "samples_ms": list, "build_flags": list, "timing": dict,
                  "tolerance": dict, "telemetry": dict, "prediction": dict}

THROTTLED_MOSTLY = 0.5  # a row whose samples were mostly taken while throttled is marked in reports


def is_missing(value: Any) -> bool:
    """None or NaN: a value a row does not have."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _decode(value: Any, default: type) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return default()
    return default() if is_missing(value) else value


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return False if is_missing(value) else bool(value)


def normalise_rows(df: pd.DataFrame | None) -> pd.DataFrame:
    """A copy with every result column present, numbers numeric, JSON columns decoded, is_baseline boolean."""
    df = pd.DataFrame() if df is None else df.copy()
    for col in COLUMNS:
        if col not in df.columns:
            df[col] = None
    for col in NUMERIC_COLUMNS:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    for col in JSON_COLUMNS:
        df[col] = [_decode(v, _JSON_DEFAULTS[col]) for v in df[col]]
    df["is_baseline"] = [_as_bool(v) for v in df["is_baseline"]]
    for col in ("problem", "contract", "implementation", "family", "status", "reason", "notes", "run_id",
                "predicted_bound", "occupancy_limited_by"):
        values = ["" if is_missing(v) else str(v) for v in df[col]]
        df[col] = pd.Series([v.upper() for v in values] if col == "status" else values, index=df.index, dtype=object)
    return df.reset_index(drop=True)


# -- receipts --------------------------------------------------------------------------------------------

def timing_summary(receipt: dict | None, rows: pd.DataFrame | None = None) -> dict:
    """The timing settings (method, L2 policy, ...) from the receipt, else from the first row that has them."""
    value = receipt_value(receipt, "timing", "timing_settings")
    if isinstance(value, dict) and value:
        return value
    if rows is not None and "timing" in rows:
        for t in rows["timing"]:
            if isinstance(t, dict) and t:
                return t
    return {}


def run_label(receipt: dict | None, rows: pd.DataFrame | None = None, fallback: str = "run") -> str:
    """A short name for a run in titles: its id (from the receipt or the rows) or the fallback."""
    value = receipt_value(receipt, "run_id", "run.id", "run.run_id")
    if value:
        return str(value)
    if rows is not None and len(rows) and "run_id" in rows:
        ids = [r for r in rows["run_id"].dropna().unique() if r]
        if len(ids) == 1:
            return str(ids[0])
    return fallback


def attach_run(df: pd.DataFrame, receipt: dict | None, run: dict | None = None) -> pd.DataFrame:
    """Normalised rows with the run's GPU name in a `gpu` column (from the receipt, else the store's runs row)."""
    df = normalise_rows(df)
    name = gpu_name(receipt) or gpu_name(run or {})
    df["gpu"] = name or "unknown GPU"
    return df


# -- problems -------------------------------------------------------------------------------------------

def problem_sort_key(label: str) -> tuple:
    """Sort problems by size (m*n*k*batch), then by label; labels are 'MxNxK' or 'MxNxKxB'."""
    parts = [int(p) for p in re.findall(r"\d+", str(label))]
    volume = math.prod(parts) if parts else 0
    return (volume, str(label))


def sorted_problems(labels: Iterable[str]) -> list[str]:
    return sorted(set(labels), key=problem_sort_key)


# -- implementation names ---------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^(?P<head>[^\[]*)(?:\[(?P<params>.*)\])?$")


def split_name(name: str) -> tuple[str, list[tuple[str, str]]]:
    """'mma_sync[block=128x256x32,stages=3]' -> ('mma_sync', [('block', '128x256x32'), ('stages', '3')])."""
    match = _NAME_RE.match(name.strip())
    if not match or match.group("params") is None:
        return name, []
    params, depth, current = [], 0, ""
    for ch in match.group("params"):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += ch
    if current:
        params.append(current)
    pairs = []
    for p in params:
        key, sep, value = p.partition("=")
        pairs.append((key.strip(), value.strip()) if sep else ("", key.strip()))
    return match.group("head"), pairs


def _ellipsize(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep - keep // 3] + "…" + text[len(text) - keep // 3:]


_SELF_EXPLANATORY = ("config", "name")  # keys whose values read fine alone in a legend


def _short_procedural_names(names: list[str], width: int) -> dict[str, str]:
    """Labels for procedural names (no [params]: 'cutlass.cutlass3x_sm90_tensorop_f16_..._rasterN_swz8'), whose
    distinguishing parts sit in the middle where cutting would drop them. Names of one kind (the same text up
    to the second '_' after the last '.') keep their kind, without the registry prefix, and only the
    '_'-tokens that differ between them: 'cutlass3x_sm90…2x1x1_rasterH_swz1'. A name alone of its kind is
    left as it is."""
    def split(n: str) -> tuple[str, list[str]]:
        prefix, dot, rest = n.rpartition(".")
        tokens = rest.split("_")
        return prefix + dot + "_".join(tokens[:2]), tokens[2:]

    parts = {n: split(n) for n in names}
    kinds: dict[str, list[str]] = {}
    for n, (kind, _) in parts.items():
        kinds.setdefault(kind, []).append(n)
    out: dict[str, str] = {}
    for kind, members in kinds.items():
        if len(members) < 2:
            continue
        tails = [parts[n][1] for n in members]
        shared = {i for i in range(min(map(len, tails))) if len({t[i] for t in tails}) == 1}
        for n, tail in zip(members, tails):
            kept = [t for i, t in enumerate(tail) if i not in shared]
            if kept:
                out[n] = _ellipsize(f"{kind.rpartition('.')[2]}…{'_'.join(kept)}", width)
    return out


def short_names(names: Iterable[str], width: int = 40) -> dict[str, str]:
    """Legend labels for a set of implementation names: parameters shared by every name of the same family
    are dropped (they say nothing in this legend), what is left is cut to `width` characters. Names stay unique:
    where cutting merges two labels they keep their uncut short form, and where even that merges them,
    their full names."""
    names = list(dict.fromkeys(names))
    parsed = {n: split_name(n) for n in names}
    by_head: dict[str, list[str]] = {}
    for n, (head, _) in parsed.items():
        by_head.setdefault(head, []).append(n)
    out: dict[str, str] = {}
    uncut: dict[str, str] = {}
    for head, members in by_head.items():
        common = None
        for n in members:
            pairs = set(parsed[n][1])
            common = pairs if common is None else common & pairs
        for n in members:
            kept = [(k, v) for k, v in parsed[n][1] if (k, v) not in common or len(members) == 1]
            text = ",".join(f"{k}={v}" if k and k not in _SELF_EXPLANATORY else v for k, v in kept)
            uncut[n] = head + (f"[{text}]" if kept else "")
            out[n] = _ellipsize(uncut[n], width)
    out.update(_short_procedural_names([n for n in names if not parsed[n][1]], width))
    for fallback in (uncut, {n: n for n in names}):  # resolve collisions: first uncut, then full names
        seen: dict[str, list[str]] = {}
        for n, label in out.items():
            seen.setdefault(label, []).append(n)
        for group in seen.values():
            if len(group) > 1:
                for n in group:
                    out[n] = fallback[n]
    return out


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return ""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"
