"""Rows of several contracts side by side: what one contract buys over another on the same problem.

% of baseline stays within one contract (the same inputs, the same rule); but a study such as FP8 against
BF16 asks what the cheaper contract buys and what it costs. With `report: {across: CONTRACT}` the report
adds, per problem, every passing row of every contract beside the reference row of CONTRACT (its baseline's
row when that passes there, else its fastest passing row): the speed-up over it, and the error each row
makes against the *original* FP32 inputs (what quantizing to the contract's types costs, beside what the
kernel adds). That error is the largest absolute one, and its ratio to the reference row's: the rows of one
problem share the original inputs, so their absolute errors compare directly, where the largest relative error
does not (it sits on elements that cancel to near zero: 1e4-1e7 for BF16 and FP8 alike at 4096^3 on uniform
inputs, fp8/study-7294a19/). Rows of one GPU are only compared with rows of the same GPU.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pandas as pd

from .data import problem_sort_key
from .writers import html_table, markdown_table

NOTE = ("Each contract's passing rows beside the reference row of the `across` contract on the same problem and GPU "
        "(its baseline's row, else its fastest passing row). x ref: the row's TFLOP/s over the reference row's. "
        "Error vs original inputs: the largest |C - R| against the FP64 product of the unrounded FP32 inputs "
        "(what the contract's input types cost, with what the kernel adds), and x ref error: that over the reference "
        "row's (the rows of a problem share those inputs). Within a contract, rows are judged against the rounded "
        "inputs instead.")


def reference_rows(summary: pd.DataFrame, contract: str) -> dict[tuple[str, str], pd.Series]:
    """(gpu, problem) -> the reference row under `contract`."""
    out = {}
    part = summary[(summary["contract"] == contract) & (summary["status"] == "PASS") & summary["tflops"].notna()]
    for key, rows in part.groupby([part["gpu"].fillna(""), part["problem"]], sort=False):
        base = rows[rows["is_baseline"]]
        out[key] = (base if len(base) else rows.sort_values("tflops", ascending=False)).iloc[0]
    return out


def across_table(summary: pd.DataFrame, contract: str) -> pd.DataFrame:
    """Full precision: gpu, problem, contract, implementation, tflops, speedup, max_abs_err_orig, error_ratio (over
    the reference row's), max_rel_err_orig, reference."""
    refs = reference_rows(summary, contract)
    rows = []
    ok = summary[(summary["status"] == "PASS") & summary["tflops"].notna()]
    for _, r in ok.iterrows():
        ref = refs.get((r["gpu"] if isinstance(r["gpu"], str) else "", r["problem"]))
        if ref is None:
            continue
        rows.append({"gpu": r["gpu"], "problem": r["problem"], "contract": r["contract"],
                     "implementation": r["implementation"], "tflops": r["tflops"],
                     "speedup": r["tflops"] / ref["tflops"], "max_abs_err_orig": r.get("max_abs_err_orig"),
                     "error_ratio": _ratio(r.get("max_abs_err_orig"), ref.get("max_abs_err_orig")),
                     "max_rel_err_orig": r.get("max_rel_err_orig"),
                     "reference": f"{ref['implementation']} under {contract}",
                     "is_reference": r["contract"] == contract and r["implementation"] == ref["implementation"]})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = table.assign(p=table["problem"].map(problem_sort_key), c=table["contract"] != contract,
                         t=-table["tflops"]).sort_values(["gpu", "p", "c", "contract", "t"]).index
    return table.loc[order].reset_index(drop=True)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _ratio(value, reference) -> float | None:
    return value / reference if _finite(value) and _finite(reference) and reference > 0 else None


def _err(v) -> str:
    return f"{v:.2e}" if _finite(v) else ""


def _times(v) -> str:
    return f"{v:.1f}" if _finite(v) else ""


@dataclass
class AcrossSection:
    table: pd.DataFrame
    markdown: str
    html: str


def across_section(summary: pd.DataFrame, contract: str | None, heading: str = "##") -> AcrossSection | None:
    """The report's section, or None without an `across` contract; a section that says why when no problem
    has a reference row."""
    if not contract:
        return None
    table = across_table(summary, contract)
    title = f"Across contracts: over {contract}"
    if table.empty:
        text = f"No problem has a passing row under {contract}: nothing to compare the other contracts with."
        return AcrossSection(table, f"{heading} {title}\n\n{text}\n",
                             f"<h2>{html.escape(title)}</h2><p class='note'>{html.escape(text)}</p>")
    shown = pd.DataFrame({
        "problem": table["problem"],
        "contract": table["contract"],
        "implementation": [f"{i} (reference)" if ref else i for i, ref in zip(table["implementation"], table["is_reference"])],
        "TFLOP/s": [f"{v:.1f}" for v in table["tflops"]],
        "x ref": [f"{v:.2f}" for v in table["speedup"]],
        "error vs original inputs": [_err(v) for v in table["max_abs_err_orig"]],
        "x ref error": [_times(v) for v in table["error_ratio"]],
    })
    if table["gpu"].nunique() > 1:
        shown.insert(0, "gpu", table["gpu"])
    md = f"{heading} {title}\n\n{NOTE}\n\n{markdown_table(shown)}\n"
    body = f"<h2>{html.escape(title)}</h2><p>{html.escape(NOTE)}</p>{html_table(shown)}"
    return AcrossSection(table, md, body)
