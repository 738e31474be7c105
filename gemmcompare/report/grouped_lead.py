"""The report's section for grouped problems (an MoE layer's experts, docs/grouped.md): per problem, each kind's best
row against the **best library row** (the fastest PASS row a user gets from a library: torch's grouped GEMM,
cuBLAS's grouped GEMM, a loop of cuBLAS calls; whichever is fastest at that problem, not only the spec's baseline),
with what the problem is (experts with tokens, tokens per busy expert, skew) and how hard the library row drives
the memory; then every problem where another kind's row beats the best library row by 10% or more, with the
reasons the figures point to:

  tiny groups  at most 32 tokens per busy expert: a 128-row tile computes mostly padding, a 64-row one less;
  skew         the busiest expert holds at least twice the mean: a fixed tile per expert leaves SMs idle;
  bandwidth    the best library row streams its bytes at 50% or more of the HBM roofline: the problem is a
               weight read, and one persistent launch over every expert reads it with fewer gaps than many;
  compute      below that: the lead is the tile and the schedule (wave quantization, tile waste).

Triton's grouped GEMM is a kernel its user writes in Triton: it is read beside the project's kernels, not as a
library row. The study's table (experiments/studies/moe-shapes/moe_shapes_table.py) reads its goals from the same
figures."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .bandwidth import memory_rates
from .data import kind_of, problem_sort_key
from .writers import html_table, markdown_table

LEAD = 1.10  # a lead: the best library row's time over the row's time
TINY_TOKENS, SKEWED, BANDWIDTH_PCT = 32.0, 2.0, 50.0
TRITON = "Triton"

NOTE = ("Per grouped problem, each kind's best PASS row as % of the best library row (the fastest PASS row of a "
        "library: its time over theirs, same run). busy: experts with tokens; tokens/busy: tokens per busy expert; "
        "skew: the busiest expert's tokens over the mean; library GB/s and % HBM: the best library row's unique "
        "bytes over its time, and that as a share of the HBM roofline. Reasons for a lead of 10% or more: tiny "
        f"groups (at most {TINY_TOKENS:.0f} tokens per busy expert), skew (at least {SKEWED:.0f}x the mean), "
        f"bandwidth (the library row at {BANDWIDTH_PCT:.0f}% of the HBM roofline or more), else compute.")


def grouped_shape(grouped: Any) -> dict[str, float]:
    """experts, busy (experts with tokens), per_busy (tokens per busy expert) and skew (the busiest expert's
    tokens over the mean over all experts) of a row's `grouped` record (a dict, or its JSON text in results.csv);
    None or a record without `ms` gives zeros and NaN."""
    if isinstance(grouped, str):
        grouped = json.loads(grouped)
    ms = list((grouped or {}).get("ms") or []) if isinstance(grouped, dict) else []
    busy = [m for m in ms if m > 0]
    mean = sum(ms) / len(ms) if ms else math.nan
    return {"experts": len(ms), "busy": len(busy), "per_busy": sum(busy) / len(busy) if busy else 0.0,
            "skew": max(ms) / mean if ms and mean else math.nan}


def side_of(implementation: str, family: str) -> str:
    """'library' for a library row (Triton's excepted: 'Triton'), else the row's report kind (CUTLASS,
    hand-written, custom)."""
    if str(implementation).startswith("library.triton"):
        return TRITON
    return kind_of(family)


def against_best_library(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (contract, problem) of the grouped PASS rows that have a library row: the problem's shape, the
    best library row (`library`, `library_ms`, `library_gbs`, `library_pct_hbm`), and per other side `<side> %`
    (its best row's % of the best library row, full precision) and `<side> best` (that row)."""
    if rows is None or rows.empty or "grouped" not in rows:
        return pd.DataFrame()
    ok = rows[(rows["status"].astype(str) == "PASS") & rows["grouped"].map(_has_groups)
              & rows["median_ms"].map(_positive)].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["side"] = [side_of(i, f) for i, f in zip(ok["implementation"], ok["family"])]
    if "gpu" not in ok:
        ok["gpu"] = None
    sides = [s for s in ("CUTLASS", "hand-written", "custom", TRITON) if s in set(ok["side"])]
    sides += sorted(set(ok["side"]) - set(sides) - {"library"})
    out = []
    for (contract, problem), g in ok.groupby(["contract", "problem"], sort=False):
        lib = g[g["side"] == "library"].sort_values("median_ms")
        if lib.empty:
            continue
        best = lib.iloc[0]
        rates = memory_rates(lib.iloc[:1]).iloc[0]
        rec = {"contract": contract, "problem": problem, **grouped_shape(best["grouped"]),
               "library": best["implementation"], "library_ms": float(best["median_ms"]),
               "library_gbs": rates["achieved_gbs"], "library_pct_hbm": rates["pct_of_hbm_roofline"]}
        for s in sides:
            mine = g[g["side"] == s].sort_values("median_ms")
            rec[f"{s} %"] = 100 * rec["library_ms"] / float(mine["median_ms"].iloc[0]) if len(mine) else math.nan
            rec[f"{s} best"] = mine["implementation"].iloc[0] if len(mine) else ""
        out.append(rec)
    table = pd.DataFrame(out)
    if table.empty:
        return table
    contracts = list(dict.fromkeys(table["contract"]))  # the run's order of contracts, problems by size within
    order = sorted(range(len(table)), key=lambda i: (contracts.index(table["contract"].iloc[i]),
                                                     problem_sort_key(table["problem"].iloc[i])))
    return table.iloc[order].reset_index(drop=True)


def reasons(rec: dict) -> list[str]:
    """Why a problem favours one launch over the library's, from its figures (none when none applies)."""
    out = []
    if rec["busy"] and rec["per_busy"] <= TINY_TOKENS:
        out.append(f"tiny groups ({rec['per_busy']:.1f} tokens per busy expert)")
    if rec["skew"] >= SKEWED:
        out.append(f"skew ({rec['skew']:.1f}x the mean)")
    if rec["library_pct_hbm"] >= BANDWIDTH_PCT:
        out.append(f"bandwidth (the library row at {rec['library_gbs']:.0f} GB/s, {rec['library_pct_hbm']:.0f}% of HBM)")
    elif rec["library_pct_hbm"] == rec["library_pct_hbm"]:  # known, and below: the lead is the tile and schedule
        out.append(f"compute (the library row at {rec['library_pct_hbm']:.0f}% of HBM: the tile and the schedule)")
    return out


def leads(table: pd.DataFrame) -> pd.DataFrame:
    """Every (problem, side) whose best row beats the best library row by LEAD or more, with its reasons."""
    out = []
    for rec in table.to_dict("records"):
        for col in [c for c in rec if c.endswith(" %")]:
            if rec[col] >= 100 * LEAD:
                side = col[:-2]
                out.append({"contract": rec["contract"], "problem": rec["problem"], "kind": side,
                            "row": rec[f"{side} best"], "% of best library": rec[col], "best library": rec["library"],
                            "reasons": "; ".join(reasons(rec)) or "unknown (no HBM figure for this GPU)"})
    return pd.DataFrame(out, columns=["contract", "problem", "kind", "row", "% of best library", "best library",
                                      "reasons"])


@dataclass
class GroupedSection:
    table: pd.DataFrame
    leads: pd.DataFrame
    markdown: str
    html: str


def _pct(v) -> str:
    return "" if v is None or v != v else f"{v:.1f}"


def grouped_section(summary: pd.DataFrame, heading: str = "##") -> GroupedSection | None:
    """The section, or None when the run has no grouped problem with a library row."""
    table = against_best_library(summary)
    if table.empty:
        return None
    found = leads(table)
    sides = [c[:-2] for c in table.columns if c.endswith(" %")]
    shown = pd.DataFrame({
        "contract": table["contract"], "problem": table["problem"],
        "busy": [f"{b}/{e}" for b, e in zip(table["busy"], table["experts"])],
        "tokens/busy": table["per_busy"].map(lambda v: f"{v:.1f}"), "skew": table["skew"].map(_pct),
        "library": table["library"], "library ms": table["library_ms"].map(lambda v: f"{v:.4g}"),
        "library GB/s": table["library_gbs"].map(lambda v: "" if v != v else f"{v:.0f}"),
        "% HBM": table["library_pct_hbm"].map(_pct),
        **{f"{s} %": table[f"{s} %"].map(_pct) for s in sides}})
    n = len(found)
    head = (f"{n} lead{'s' if n != 1 else ''} of {100 * (LEAD - 1):.0f}% or more over the best library row at "
            f"{found['problem'].nunique() if n else 0} of {len(table)} grouped problems.")
    title = "Grouped problems against the best library row"
    shown_leads = found.assign(**{"% of best library": found["% of best library"].map(_pct)})
    md = f"{heading} {title}\n\n{NOTE}\n\n{head}\n\n{markdown_table(shown)}\n"
    page = (f"<h2>{html.escape(title)}</h2><p class='note'>{html.escape(NOTE)}</p><p>{html.escape(head)}</p>"
            + html_table(shown))
    if n:
        md += f"\n{heading}# Where another kind leads by {100 * (LEAD - 1):.0f}% or more\n\n{markdown_table(shown_leads)}\n"
        page += (f"<h3>Where another kind leads by {100 * (LEAD - 1):.0f}% or more</h3>" + html_table(shown_leads))
    return GroupedSection(table, found, md, page)


def _has_groups(grouped: Any) -> bool:
    if isinstance(grouped, str):
        try:
            grouped = json.loads(grouped)
        except ValueError:
            return False
    return isinstance(grouped, dict) and bool(grouped.get("ms"))


def _positive(v: Any) -> bool:
    try:
        return float(v) > 0
    except (TypeError, ValueError):
        return False
