"""The report's "Tuned picks against the oracle" section: for a run made with `timing: {oracle: true}` (or
`run --oracle`), each tuned row's pick beside the fastest of its candidates when every candidate was measured
with the full protocol (tuning/select.py). A gap says what the brief race and its runoff cost in optimality;
the row's own time is unaffected (it is measured afresh either way)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import pandas as pd

from .writers import html_table, markdown_table

NOTE = ("Each tuned row's pick beside the fastest of its candidates, every one that passed its check measured with "
        "the run's full protocol after the pick was made (timing.oracle). gap: how much longer the pick took than "
        "that best, in the oracle's own measurements (each with its CI in the row's receipt, timing.tuning).")


def oracle_rows(timing) -> tuple[str | None, float | None]:
    """(oracle_best, pick_gap) from a row's timing receipt; (None, None) for a row without an oracle."""
    tuning = (timing or {}).get("tuning") if isinstance(timing, dict) else None
    if not isinstance(tuning, dict) or not tuning.get("oracle_ms"):
        return None, None
    return tuning.get("oracle_best"), tuning.get("oracle_gap")


@dataclass
class PicksSection:
    table: pd.DataFrame
    markdown: str
    html: str


def picks_section(summary: pd.DataFrame, heading: str = "##") -> PicksSection | None:
    """The section, or None when no row of the run had an oracle."""
    if "pick_gap" not in summary or summary["pick_gap"].isna().all():
        return None
    table = summary[summary["pick_gap"].notna()]
    gaps = table["pick_gap"].astype(float)
    shown = pd.DataFrame({
        "contract": table["contract"],
        "problem": table["problem"],
        "tuned row": table["implementation"],
        "pick": table["pick"],
        "oracle's best": ["(the pick)" if b == p else b for b, p in zip(table["oracle_best"], table["pick"])],
        "gap %": [f"{100 * g:.1f}" for g in gaps],
    })
    worst = gaps.max()
    head = (f"{(gaps == 0).sum()} of {len(gaps)} picks are the oracle's best; the largest gap is "
            f"{100 * worst:.1f}% ({table.loc[gaps.idxmax(), 'implementation']} at {table.loc[gaps.idxmax(), 'problem']}).")
    title = "Tuned picks against the oracle"
    md = f"{heading} {title}\n\n{NOTE}\n\n{head}\n\n{markdown_table(shown)}\n"
    page = (f"<h2>{html.escape(title)}</h2><p class='note'>{html.escape(NOTE)}</p><p>{html.escape(head)}</p>"
            + html_table(shown))
    return PicksSection(table, md, page)
