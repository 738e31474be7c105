"""Where the ranking by energy differs from the ranking by time (issue 42): per (problem, contract), the PASS rows
that carry an energy figure, ordered by median time and by joules per GEMM, and the pairs whose order flips: row A
is faster than row B while B uses less energy per GEMM. A flip counts only when both differences lie beyond the two
rows' confidence intervals (their relative half-widths added, so the intervals do not overlap): a flip inside the
noise is not one. At a power cap (the H200's 700 W) such flips are what energy adds to a time comparison."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pandas as pd

from .writers import html_table, markdown_table

NOTE = ("Per problem and contract, the rows whose order by joules per GEMM differs from their order by median "
        "time: the faster row uses more energy per GEMM. Counted only where both differences lie beyond the two "
        "rows' 95% confidence intervals (time: median_ci_rel, energy: energy_ci_rel).")


def _finite(value) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def _ci(value) -> float:
    v = _finite(value)
    return v if v is not None else 0.0


def _beyond(a: float, b: float, ci_a: float, ci_b: float) -> bool:
    """a < b by more than both relative half-widths together (log scale, so the test is symmetric)."""
    return math.log(b / a) > math.log1p(ci_a) + math.log1p(ci_b)


def energy_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The PASS rows with a time and an energy figure, with their time and energy ranks per (problem, contract)
    (1 = fastest / least energy)."""
    need = {"status", "median_ms", "energy_j_per_gemm", "problem", "contract", "implementation"}
    if rows is None or rows.empty or not need <= set(rows.columns):
        return pd.DataFrame(columns=sorted(need) + ["time_rank", "energy_rank"])
    ok = rows[(rows["status"].astype(str) == "PASS")
              & rows["median_ms"].map(_finite).notna() & rows["energy_j_per_gemm"].map(_finite).notna()].copy()
    if ok.empty:
        return ok.assign(time_rank=[], energy_rank=[])
    groups = ok.groupby(["problem", "contract"], sort=False, observed=True)
    ok["time_rank"] = groups["median_ms"].rank(method="min").astype(int)
    ok["energy_rank"] = groups["energy_j_per_gemm"].rank(method="min").astype(int)
    return ok


def energy_flips(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per flipped pair: problem, contract, the faster row, the row that uses less energy, how much
    less time the faster takes and how much less energy the other uses (both in % of the larger figure)."""
    return _flips(energy_rows(rows))


def _flips(ranked: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (problem, contract), g in ranked.groupby(["problem", "contract"], sort=False, observed=True):
        recs = g.to_dict("records")
        for fast in recs:
            for green in recs:
                if fast is green:
                    continue
                t_f, t_g = float(fast["median_ms"]), float(green["median_ms"])
                e_f, e_g = float(fast["energy_j_per_gemm"]), float(green["energy_j_per_gemm"])
                if (_beyond(t_f, t_g, _ci(fast.get("median_ci_rel")), _ci(green.get("median_ci_rel")))
                        and _beyond(e_g, e_f, _ci(green.get("energy_ci_rel")), _ci(fast.get("energy_ci_rel")))):
                    out.append({"problem": str(problem), "contract": str(contract),
                                "faster": fast["implementation"], "less energy": green["implementation"],
                                "time saved %": 100 * (1 - t_f / t_g), "energy saved %": 100 * (1 - e_g / e_f)})
    return pd.DataFrame(out, columns=["problem", "contract", "faster", "less energy", "time saved %",
                                      "energy saved %"])


def flip_lines(rows: pd.DataFrame) -> list[str]:
    """The flips as plain lines, for the study tables; one line saying there are none otherwise."""
    ranked = energy_rows(rows)
    return _lines(ranked, _flips(ranked))


def _lines(ranked: pd.DataFrame, flips: pd.DataFrame) -> list[str]:
    if ranked.empty:
        return ["energy: no PASS row carries an energy figure (run with --energy or timing: {energy: true})"]
    groups = ranked.groupby(["problem", "contract"], sort=False, observed=True).ngroups
    if flips.empty:
        return [f"energy: at {groups} problem/contract pair(s) the ranking by energy per GEMM is the ranking by "
                "time wherever both differ beyond their CIs"]
    lines = [f"energy: the ranking by energy differs from the ranking by time at "
             f"{flips.groupby(['problem', 'contract']).ngroups} of {groups} problem/contract pair(s):"]
    for f in flips.to_dict("records"):
        lines.append(f"    {f['problem']} {f['contract']}: {f['faster']} is {f['time saved %']:.1f}% faster, "
                     f"{f['less energy']} uses {f['energy saved %']:.1f}% less energy per GEMM")
    return lines


@dataclass
class EnergyRankingSection:
    table: pd.DataFrame
    markdown: str
    html: str


def energy_ranking_section(summary: pd.DataFrame, heading: str = "##") -> EnergyRankingSection | None:
    """The report's section, or None when no row of the run carries an energy figure."""
    ranked = energy_rows(summary)
    if ranked.empty:
        return None
    flips = _flips(ranked)
    head = _lines(ranked, flips)[0].removeprefix("energy: ")
    head = head[0].upper() + head[1:].rstrip(":") + "."
    shown = flips.assign(**{"time saved %": flips["time saved %"].map(lambda v: f"{v:.1f}"),
                            "energy saved %": flips["energy saved %"].map(lambda v: f"{v:.1f}")})
    title = "Ranking by energy against ranking by time"
    md = f"{heading} {title}\n\n{NOTE}\n\n{head}\n"
    page = f"<h2>{html.escape(title)}</h2><p class='note'>{html.escape(NOTE)}</p><p>{html.escape(head)}</p>"
    if not flips.empty:
        md += f"\n{markdown_table(shown)}\n"
        page += html_table(shown)
    return EnergyRankingSection(flips, md, page)
