"""Result tables: one frame at full precision (written as CSV) and its display form (Markdown, HTML).

Per contract and problem, every implementation's status, median time, TFLOP/s (logical; executed when the
implementation pads), achieved GB/s and % of the HBM roofline (memory-bound problems only: report/bandwidth.py),
% of the same-run baseline, % of peak, energy per GEMM with its CI, power, GFLOP per joule and the SM clock of
the energy batches (rows measured with `timing: {energy: true}`), errors against both references, CV and the
build's resources. Numbers are rounded only in the display form.
"""

from __future__ import annotations

import html as _html
import math
from typing import Callable

import pandas as pd

from .bandwidth import memory_rates
from .data import THROTTLED_MOSTLY, is_missing, normalise_rows, problem_sort_key
from .writers import html_table, markdown_table

_Fmt = Callable[[float], str]
# shown only on rows whose problem is memory-bound: on a compute-bound one TFLOP/s and % of peak say it
MEMORY_BOUND_ONLY = ("achieved_gbs", "pct_of_hbm_roofline")


def _num(v) -> bool:
    return not is_missing(v)


def _sig(v: float) -> str:
    return f"{v:.4g}"


def _rate(v: float) -> str:
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def _pct(v: float) -> str:
    return f"{v:.1f}"


def _err(v: float) -> str:
    return "0" if v == 0 else f"{v:.2e}"


def _int(v: float) -> str:
    return f"{int(v)}"


def _cv(v: float) -> str:
    return f"{100 * v:.2f}%"


# (column of the summary frame, its header for display, its display formatter)
DISPLAY: list[tuple[str, str, _Fmt | None]] = [
    ("gpu", "GPU", None),
    ("implementation", "implementation", None),
    ("status", "status", None),
    ("median_ms", "median ms", _sig),
    ("tflops", "TFLOP/s", _rate),
    ("executed_tflops", "executed TFLOP/s", _rate),
    ("achieved_gbs", "GB/s", _rate),
    ("pct_of_hbm_roofline", "% of HBM roofline", _pct),
    ("pct_of_baseline", "% of baseline", _pct),
    ("pct_of_peak", "% of peak", _pct),
    ("energy_j_per_gemm", "J/GEMM", _sig),
    ("energy_ci_rel", "J CI", _cv),
    ("avg_power_w", "W", _pct),
    ("gflop_per_j", "GFLOP/J", _pct),
    ("energy_sm_clock_mhz", "MHz (energy)", _int),
    ("max_abs_err", "max abs err", _err),
    ("max_rel_err", "max rel err", _err),
    ("max_abs_err_orig", "max abs err (orig)", _err),
    ("max_rel_err_orig", "max rel err (orig)", _err),
    ("cv", "CV", _cv),
    ("n_samples", "samples", _int),
    ("registers", "regs", _int),
    ("smem_bytes", "smem B", _int),
    ("spills", "spills st/ld", None),
    ("remark", "remark", None),
]

SUMMARY_COLUMNS = [
    "run_id", "gpu", "contract", "problem", "m", "n", "k", "batch", "storage", "lda", "ldb", "ldc", "implementation",
    "pick", "oracle_best", "pick_gap", "family", "is_baseline", "status", "reason", "median_ms", "timing_method", "median_ms_at_max_clock",
    "median_ci_rel", "cv", "n_samples", "flops", "executed_flops", "tflops", "executed_tflops", "achieved_gbs",
    "pct_of_hbm_roofline", "memory_bound", "pct_of_baseline", "baseline", "peak_tflops", "pct_of_peak",
    "unique_bytes", "max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig", "worst_bound_ratio", "registers", "smem_bytes",
    "spill_stores", "spill_loads", "throttled_fraction", "sm_clock_mhz", "max_sm_clock_mhz", "arch",
    "energy_j_per_gemm", "energy_ci_rel", "avg_power_w", "gflop_per_j", "energy_source", "energy_sm_clock_mhz",
    "energy_throttled_fraction",
]


def _order(df: pd.DataFrame) -> pd.DataFrame:
    contracts = list(dict.fromkeys(df["contract"]))
    key = pd.DataFrame({
        "c": df["contract"].map(contracts.index),
        "g": df["gpu"] if "gpu" in df else "",
        "p": df["problem"].map(problem_sort_key),
        "b": ~df["is_baseline"],
        "s": df["status"] != "PASS",
        "t": df["median_ms"].fillna(math.inf),
        "i": df["implementation"],
    })
    idx = key.sort_values(["c", "g", "p", "b", "s", "t", "i"]).index
    return df.loc[idx].reset_index(drop=True)


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The report's table at full precision: one row per result, ordered by contract, problem size, baseline first,
    then passing rows fastest first, then the rest."""
    df = normalise_rows(rows)
    if "gpu" not in df:
        df["gpu"] = ""
    df = _order(df)
    df = df.join(memory_rates(df))
    if "params" in df:  # a tuned row (gemmcompare/tuning): the configuration it picked on this problem
        df["pick"] = [(p or {}).get("pick") if isinstance(p, dict) else None for p in df["params"]]
    if "timing" in df:  # an oracle run (timing.oracle): the fastest candidate and how far the pick is from it
        from .picks import oracle_rows

        got = [oracle_rows(t) for t in df["timing"]]
        if any(best is not None for best, _ in got):
            df["oracle_best"] = [best for best, _ in got]
            df["pick_gap"] = [gap for _, gap in got]
    return df[[c for c in SUMMARY_COLUMNS if c in df]].copy()


def _remark(row: pd.Series) -> str:
    bits = []
    if row.get("status") != "PASS" and row.get("reason"):
        reason = str(row["reason"]).strip().splitlines()[0] if str(row["reason"]).strip() else ""
        bits.append(reason[:80] + ("…" if len(reason) > 80 else ""))
    tf = row.get("throttled_fraction")
    if _num(tf) and tf > THROTTLED_MOSTLY:
        bits.append(f"throttled in {100 * tf:.0f}% of sample batches")
    return "; ".join(bits)


def display_table(summary: pd.DataFrame, *, drop_constant: tuple[str, ...] = ("gpu",)) -> pd.DataFrame:
    """Strings for people: rounded numbers, the baseline marked, empty columns left out."""
    df = summary.copy()
    out = pd.DataFrame(index=df.index)
    padded = "executed_flops" in df and any(
        _num(e) and _num(f) and e != f for e, f in zip(df["executed_flops"], df.get("flops", [])))
    st = df.get("spill_stores", pd.Series(dtype=float))
    ld = df.get("spill_loads", pd.Series(dtype=float))
    df["spills"] = [f"{int(a)}/{int(b)}" if _num(a) and _num(b) else "" for a, b in zip(st, ld)]
    df["remark"] = [_remark(r) for _, r in df.iterrows()]
    for col, header, fmt in DISPLAY:
        if col not in df:
            continue
        if col == "executed_tflops" and not padded:
            continue
        if col in drop_constant and df[col].nunique(dropna=False) <= 1:
            continue
        values = df[col]
        if col in MEMORY_BOUND_ONLY:
            bound = df["memory_bound"] if "memory_bound" in df else [False] * len(df)
            values = [v if _num(m) and bool(m) else math.nan for v, m in zip(values, bound)]
        if col == "implementation":
            picks = df["pick"] if "pick" in df else [None] * len(df)
            values = [f"{v} (baseline)" if b else f"{v} (tuned: {pk})" if isinstance(pk, str) and pk else v
                      for v, b, pk in zip(values, df["is_baseline"], picks)]
        elif fmt is not None:
            values = [fmt(v) if _num(v) else "" for v in values]
        else:
            values = ["" if is_missing(v) else str(v) for v in values]
        if col not in ("implementation", "status") and all(v == "" for v in values):
            continue  # a column with nothing in it (e.g. no resources for library rows) says nothing
        out[header] = values
    return out


def _groups(summary: pd.DataFrame):
    """(contract, is the first problem of the contract, problem, rows) in report order."""
    for contract in dict.fromkeys(summary["contract"]):
        part = summary[summary["contract"] == contract]
        for i, problem in enumerate(dict.fromkeys(part["problem"])):
            yield contract, i == 0, problem, part[part["problem"] == problem]


def tables_markdown(summary: pd.DataFrame, heading: str = "##") -> str:
    """One Markdown table per contract and problem, under headings."""
    out = []
    for contract, first, problem, rows in _groups(summary):
        if first:
            out.append(f"{heading} Contract `{contract}`\n")
        out.append(f"{heading}# {problem}\n")
        out.append(markdown_table(display_table(rows)) + "\n")
    return "\n".join(out)


def tables_html(summary: pd.DataFrame) -> str:
    """The same tables as HTML fragments."""
    out = []
    for contract, first, problem, rows in _groups(summary):
        if first:
            out.append(f"<h3>Contract <code>{_html.escape(contract)}</code></h3>")
        out.append(f"<h4>{_html.escape(problem)}</h4>")
        out.append(html_table(display_table(rows)))
    return "\n".join(out)
