"""The top of a report: what failed, then per problem and contract the best of each kind of implementation
(library, CUTLASS, hand-written, custom) as % of the same-run baseline, problems with failures first.

    failures(summary)      the rows that FAIL, CRASH, TIME OUT or do not build, with their reasons
    best_of_kind(summary)  one row per (contract, problem, GPU): the baseline's time, each kind's best row
"""

from __future__ import annotations

import html
import math

import pandas as pd

from .data import KINDS, is_missing, kind_of, problem_sort_key
from .labels import legend_labels
from .writers import cells_table, markdown_table

FAILED = ("FAIL", "CRASH", "TIMEOUT", "BUILD_ERROR")


def failures(summary: pd.DataFrame) -> pd.DataFrame:
    """Failed rows (contract, problem, implementation, status, reason's first line) in report order."""
    bad = summary[summary["status"].isin(FAILED)]
    reason = [(str(r).strip().splitlines() or [""])[0] for r in bad["reason"]]
    return pd.DataFrame({"contract": bad["contract"], "problem": bad["problem"], "implementation": bad["implementation"],
                         "status": bad["status"], "reason": reason}).reset_index(drop=True)


def best_of_kind(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (contract, problem, GPU): the baseline and its median ms, then per kind present in the rows
    '<kind> %' (the best PASS row's % of baseline, full precision) and '<kind> best' (its name), and the
    failed and skipped counts. Problems with a failure come first; then report order."""
    kinds = [k for k in KINDS if any(kind_of(f) == k for f in summary["family"])]
    kinds += sorted({kind_of(f) for f in summary["family"]} - set(kinds) - {"other"})
    records = []
    gpus = "gpu" in summary and summary["gpu"].nunique() > 1
    for (contract, problem, gpu), part in summary.groupby(["contract", "problem", "gpu"], sort=False):
        base = part[part["is_baseline"] & (part["status"] == "PASS")]
        rec = {"contract": contract, "problem": problem, "gpu": gpu,
               "baseline": base["implementation"].iloc[0] if len(base) else "",
               "baseline ms": float(base["median_ms"].iloc[0]) if len(base) else math.nan,
               "failed": int(part["status"].isin(FAILED).sum()), "skipped": int((part["status"] == "SKIP").sum())}
        for kind in kinds:
            ok = part[(part["status"] == "PASS") & part["pct_of_baseline"].notna()
                      & (part["family"].map(kind_of) == kind)]
            best = ok.loc[ok["pct_of_baseline"].idxmax()] if len(ok) else None
            rec[f"{kind} %"] = float(best["pct_of_baseline"]) if best is not None else math.nan
            rec[f"{kind} best"] = best["implementation"] if best is not None else ""
        records.append(rec)
    out = pd.DataFrame(records)
    if out.empty:
        return out
    contracts = list(dict.fromkeys(summary["contract"]))
    out["_f"] = out["failed"] == 0
    out["_c"] = out["contract"].map(contracts.index)
    out["_p"] = out["problem"].map(problem_sort_key)
    out = out.sort_values(["_f", "_c", "_p"]).drop(columns=["_f", "_c", "_p"]).reset_index(drop=True)
    return out if gpus else out.drop(columns=["gpu"])


def _kinds(best: pd.DataFrame) -> list[str]:
    return [c[:-2] for c in best.columns if c.endswith(" %")]


def _pct(v) -> str:
    return "" if is_missing(v) else f"{v:.1f}"


def summary_markdown(summary: pd.DataFrame) -> str:
    """The summary section in Markdown: failures, then the best of each kind."""
    out = []
    bad = failures(summary)
    if len(bad):
        out.append(f"**Failures ({len(bad)})**\n")
        out.append(markdown_table(bad) + "\n")
    else:
        out.append(f"No failures ({(summary['status'] == 'SKIP').sum()} SKIP rows: see the tables).\n")
    best = best_of_kind(summary)
    if len(best):
        out.append("**Best of each kind, % of the same-run baseline** (the implementation below each figure)\n")
        names = legend_labels([n for k in _kinds(best) for n in best[f"{k} best"] if n])
        rows = []
        for _, r in best.iterrows():
            row = {k: v for k, v in r.items() if k in ("contract", "problem", "gpu", "baseline")}
            row["baseline ms"] = "" if is_missing(r["baseline ms"]) else f"{r['baseline ms']:.4g}"
            for kind in _kinds(best):
                name = r[kind + " best"]
                row[kind] = f"{_pct(r[kind + ' %'])} ({names.get(name, name)})" if name else ""
            row["failed"], row["skipped"] = str(r["failed"]), str(r["skipped"])
            rows.append(row)
        out.append(markdown_table(pd.DataFrame(rows)) + "\n")
    return "\n".join(out)


def summary_html(summary: pd.DataFrame) -> str:
    """The summary section in HTML: failures (red), then the best of each kind, each figure with the
    implementation's legend label under it (the full name on hover)."""
    out = []
    bad = failures(summary)
    if len(bad):
        out.append(f"<h3>Failures ({len(bad)})</h3>")
        rows = [[html.escape(str(v)) for v in r] for r in bad.itertuples(index=False)]
        css = [[f"status-{r[3]}" if j == 3 else None for j in range(len(r))] for r in bad.itertuples(index=False)]
        out.append(cells_table(list(bad.columns), rows, css=css))
    else:
        out.append(f"<p>No failures ({int((summary['status'] == 'SKIP').sum())} SKIP rows: see the tables).</p>")
    best = best_of_kind(summary)
    if len(best):
        out.append("<h3>Best of each kind, % of the same-run baseline</h3>")
        kinds = _kinds(best)
        names = legend_labels([n for k in kinds for n in best[f"{k} best"] if n])
        headers = [c for c in ("contract", "problem", "gpu") if c in best] + ["baseline ms"] + kinds + ["failed", "skipped"]
        rows, css = [], []
        for _, r in best.iterrows():
            cells = [html.escape(str(r[c])) for c in headers[: headers.index("baseline ms")]]
            ms = r["baseline ms"]
            cells.append("" if is_missing(ms) else f"{ms:.4g}<span class='impl'>{html.escape(r['baseline'])}</span>")
            for kind in kinds:
                name = r[f"{kind} best"]
                cells.append(f"{_pct(r[kind + ' %'])}<span class='impl' title='{html.escape(name)}'>"
                             f"{html.escape(names.get(name, name))}</span>" if name else "")
            cells += [str(r["failed"]), str(r["skipped"])]
            rows.append(cells)
            css.append([None] * (len(cells) - 2) + ["status-FAIL" if r["failed"] else None, None])
        numeric = [h not in ("contract", "problem", "gpu") for h in headers]
        out.append(cells_table(headers, rows, numeric=numeric, css=css))
    return "\n".join(out)
