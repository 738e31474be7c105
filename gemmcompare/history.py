"""One implementation's figures over every stored run, by date and git commit: a table and a plot.

    h = history(Store("gemmcompare.db"), "library.cublas", problem="4096x4096x4096")
    print(h.text()); write_history(h, "reports/history")
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .errors import GemmCompareError
from .store.validation import check_rows
from .report.data import normalise_rows, problem_sort_key
from .report.plots import save_figure
from .report.writers import write_table_page

MAX_SERIES = 8

HISTORY_COLUMNS = ["started_at", "run_id", "git_commit", "git_dirty", "gpu", "contract", "problem", "status",
                   "median_ms", "median_ci_rel", "tflops", "pct_of_baseline", "pct_of_peak", "n_samples", "reason"]


class HistoryError(GemmCompareError):
    """An implementation, problem or contract the store has no rows for."""

    exit_code = 2


@dataclass
class History:
    implementation: str
    table: pd.DataFrame  # one row per (run, contract, problem), oldest first
    notes: list[str] = field(default_factory=list)

    def text(self, max_rows: int = 30) -> str:
        t = self.table
        lines = [f"history of {self.implementation}: {len(t)} rows from {t['run_id'].nunique()} runs"]
        shown = t.tail(max_rows)
        if len(t) > max_rows:
            lines.append(f"(the last {max_rows} rows)")
        disp = display_history(shown)
        constant = [c for c in ("gpu", "contract", "reason") if disp[c].nunique() <= 1]
        lines.append(disp.drop(columns=constant).to_string(index=False))
        lines += [f"{c}: {disp[c].iloc[0]}" for c in constant if c != "reason" and len(disp)]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _resolve(name: str, known: list[str]) -> str:
    if name in known:
        return name
    hits = [k for k in known if name in k]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        listed = "\n  ".join(hits[:20])
        raise HistoryError(f"'{name}' matches {len(hits)} implementations in the store; name one:\n  {listed}")
    near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    raise HistoryError(f"no stored result for implementation '{name}'{hint}")


def history(store, implementation: str, problem: str | None = None, contract: str | None = None) -> History:
    """Rows of one implementation (exact name, or a unique substring of one) across every stored run."""
    rows = store.results(decode=False)
    if rows.empty:
        raise HistoryError(f"the store {getattr(store, 'path', '')} holds no results")
    check_rows(rows, f"the store {getattr(store, 'path', '')}")
    name = _resolve(implementation, sorted(set(rows["implementation"])))
    rows = rows[rows["implementation"] == name]
    for col, value in (("problem", problem), ("contract", contract)):
        if value is not None:
            if value not in set(rows[col]):
                have = ", ".join(sorted(set(rows[col]), key=problem_sort_key if col == "problem" else str))
                raise HistoryError(f"{name} has no stored row for {col} '{value}' (it has: {have})")
            rows = rows[rows[col] == value]
    rows = normalise_rows(rows.drop(columns=["samples_ms", "checks"]))
    runs = store.runs()
    runs = runs.rename(columns={"started_at": "run_started_at"})[
        ["run_id", "run_started_at", "git_commit", "git_dirty", "gpu"]]
    df = rows.merge(runs, on="run_id", how="left")
    df["started_at"] = df["run_started_at"].fillna(df["started_at"])
    df["git_commit"] = df["git_commit"].fillna("").astype(str).str[:10]
    df["gpu"] = df["gpu"].fillna("")
    df["_p"] = df["problem"].map(problem_sort_key)
    df = df.sort_values(["started_at", "contract", "_p"]).reset_index(drop=True)
    notes = []
    if df["gpu"].nunique() > 1:
        notes.append("rows come from several GPUs: compare % of baseline / % of peak across them, not TFLOP/s")
    dirty = df[df["git_dirty"].astype(str).str.lower().isin(["true", "1"])]["run_id"].nunique()
    if dirty:
        notes.append(f"{dirty} run(s) were made from a dirty working tree: their commit is not the whole story")
    return History(name, df[HISTORY_COLUMNS].copy(), notes)


def display_history(t: pd.DataFrame) -> pd.DataFrame:
    out = t.copy()
    out["started_at"] = out["started_at"].astype(str).str[:16]
    for col, fmt in (("median_ms", "{:.4g}"), ("tflops", "{:.1f}"), ("pct_of_baseline", "{:.1f}"),
                     ("pct_of_peak", "{:.1f}")):
        out[col] = [fmt.format(v) if isinstance(v, (int, float)) and np.isfinite(v) else "" for v in out[col]]
    out["median_ci_rel"] = [f"±{100 * v:.2f}%" if isinstance(v, (int, float)) and np.isfinite(v) else ""
                            for v in out["median_ci_rel"]]
    out["n_samples"] = [str(int(v)) if isinstance(v, (int, float)) and np.isfinite(v) else "" for v in out["n_samples"]]
    out["reason"] = out["reason"].astype(str).str.split("\n").str[0].str[:60]
    return out.drop(columns=["git_dirty"]).rename(columns={"median_ci_rel": "median CI"})


def plot_history(h: History, out_dir: Path) -> tuple[list[Path], str]:
    """TFLOP/s (and % of baseline when known) per run; one line per (contract, problem, GPU)."""
    t = h.table.copy()
    runs = t.drop_duplicates("run_id")[["run_id", "started_at", "git_commit"]].reset_index(drop=True)
    if len(runs) < 1:
        return [], "no runs"
    pos = {r: i for i, r in enumerate(runs["run_id"])}
    t["x"] = t["run_id"].map(pos)
    parts = [c for c in ("contract", "problem", "gpu") if c == "problem" or t[c].nunique() > 1]
    t["series"] = t[parts].astype(str).agg(" ".join, axis=1)
    series = list(dict.fromkeys(t.sort_values("problem", key=lambda s: s.map(problem_sort_key))["series"]))
    caption = []
    if len(series) > MAX_SERIES:
        caption.append(f"{len(series) - MAX_SERIES} smaller problems left out; use --problem to pick one")
        series = series[-MAX_SERIES:]
    panels = [("tflops", "TFLOP/s (logical)")]
    if t["pct_of_baseline"].notna().any():
        panels.append(("pct_of_baseline", "% of same-run baseline"))
    fig = Figure(figsize=(max(7.0, 0.55 * len(runs) + 4), 3.2 * len(panels) + 1.2))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    cmap = matplotlib.colormaps["tab10"]
    for ax, (col, label) in zip(axes, panels):
        for i, s in enumerate(series):
            part = t[t["series"] == s]
            good = part[part["status"] == "PASS"]
            ax.plot(good["x"], good[col], marker="o", markersize=4, color=cmap(i % 10), label=s)
            bad = part[part["status"] != "PASS"]
            if len(bad):
                ax.plot(bad["x"], [0] * len(bad), linestyle="none", marker="x", color="red", markersize=8)
        ax.set_ylim(bottom=0)
        if col == "pct_of_baseline":
            ax.axhline(100, color="black", linestyle="--", linewidth=1.2)
            ax.annotate("baseline = 100%", xy=(0.01, 100), xycoords=("axes fraction", "data"), va="bottom",
                        fontsize=7)
            ax.set_ylim(0, max(115.0, float(np.nanmax(t[col])) * 1.1 if t[col].notna().any() else 0.0))
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    labels = [f"{str(r.started_at)[:10]}\n{r.git_commit[:7] or '?'}" for r in runs.itertuples()]
    step = max(1, math.ceil(len(runs) / 25))
    axes[-1].set_xticks(range(0, len(runs), step))
    axes[-1].set_xticklabels(labels[::step], fontsize=7, rotation=0 if len(runs) <= 10 else 45,
                             ha="center" if len(runs) <= 10 else "right")
    axes[-1].set_xlabel("run (date, git commit), oldest first")
    axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, title=" ".join(parts),
                   title_fontsize=7)
    gpus = ", ".join(g for g in dict.fromkeys(t["gpu"]) if g) or "unknown GPU"
    axes[0].set_title(f"{gpus} — history of {h.implementation}", fontsize=9)
    if (t["status"] != "PASS").any():
        caption.append("a red x at 0 marks a run where the row did not PASS")
    files = save_figure(fig, out_dir, "history")
    return files, "; ".join(caption)


def write_history(h: History, out_dir: str | Path) -> list[Path]:
    """history.csv (full precision), history.md, history.html and history.png/.svg."""
    files, caption = plot_history(h, Path(out_dir))
    return write_table_page(out_dir, "history", f"gemmcompare history: {h.implementation}", h.table,
                            display_history(h.table), plot_files=files, caption=caption, notes=list(h.notes))
