"""Implementations' figures over many runs, by date and git commit: a table and a plot.

Runs come from any of the sources the commands take (store.sources): SQLite stores, run folders, folders of
them at any depth (e.g. experiments/studies), results files, run ids. The implementation is named exactly, by a part of
its name, or by a regular expression; each one matched (at most MAX_IMPLEMENTATIONS) is its own series.

    h = history(["experiments/studies", "gemmcompare.db"], "library.cublas", problem="4096x4096x4096")
    print(h.text()); write_history(h, "reports/history")
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .errors import GemmCompareError
from .store import DEFAULT_STORE
from .store.sources import RunSource, find_sources
from .receipt import gpu_name
from .results import concat_rows
from .report.data import normalise_rows, problem_sort_key
from .report.stats import rate_ci, samples_of
from .report.writers import write_table_page

MAX_SERIES = 8
MAX_IMPLEMENTATIONS = 6

HISTORY_COLUMNS = ["started_at", "run_id", "source", "git_commit", "git_dirty", "gpu", "implementation", "contract",
                   "problem", "status", "median_ms", "median_ci_rel", "tflops", "tflops_ci_lo", "tflops_ci_hi",
                   "pct_of_baseline", "pct_of_peak", "n_samples", "reason"]


class HistoryError(GemmCompareError):
    """An implementation, problem or contract the runs have no rows for, or runs that cannot be read."""

    exit_code = 2


@dataclass
class History:
    implementation: str  # the name, or the pattern when it matched several
    table: pd.DataFrame  # one row per (run, implementation, contract, problem), oldest first
    notes: list[str] = field(default_factory=list)

    @property
    def implementations(self) -> list[str]:
        return list(dict.fromkeys(self.table["implementation"]))

    def text(self, max_rows: int = 30) -> str:
        t = self.table
        names = self.implementations
        lines = [f"history of {self.implementation}: {len(t)} rows from {t['run_id'].nunique()} runs"
                 + (f", {len(names)} implementations" if len(names) > 1 else "")]
        shown = t.tail(max_rows)
        if len(t) > max_rows:
            lines.append(f"(the last {max_rows} rows)")
        disp = display_history(shown)
        constant = [c for c in ("gpu", "contract", "implementation", "source", "reason") if disp[c].nunique() <= 1]
        lines.append(disp.drop(columns=constant).to_string(index=False))
        lines += [f"{c}: {disp[c].iloc[0]}" for c in constant if c != "reason" and len(disp)]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# -- reading runs ---------------------------------------------------------------------------------------------

def _rows_of(src: RunSource) -> pd.DataFrame:
    """A run's rows with the columns a history needs from its receipt."""
    rows, receipt = src.rows.copy(), src.receipt
    started = pd.Series(rows.get("started_at", pd.Series(dtype=str))).dropna().astype(str)
    rows["run_id"] = src.label
    rows["started_at"] = receipt.get("started_at") or (started.min() if len(started) else "")
    rows["git_commit"] = receipt.get("git_commit", "")
    rows["git_dirty"] = receipt.get("git_dirty", "")
    rows["gpu"] = gpu_name(receipt) or ""
    rows["source"] = src.origin
    return rows


def read_runs(sources: Iterable[Any], store: str | Path = DEFAULT_STORE) -> pd.DataFrame:
    """Result rows of every run in `sources` (any of the sources the commands take, store.sources: stores,
    run folders, folders of runs at any depth, results files, run ids in `store`; or open Store objects), with
    run_id, started_at, git_commit, git_dirty, gpu and source columns. A run seen twice (a store and its run
    folder) is kept once."""
    texts = [str(s.path) if hasattr(s, "results") and hasattr(s, "runs") else s for s in sources]
    df = concat_rows([_rows_of(src) for src in find_sources(texts, store)])
    return df.drop_duplicates(["run_id", "contract", "problem", "implementation"], keep="first")


# -- matching ------------------------------------------------------------------------------------------------

def match_implementations(pattern: str, known: list[str]) -> list[str]:
    """The names `pattern` means: itself when it is one; else every name it finds as a regular expression or
    as plain text. Raises HistoryError for none (with the nearest names) or more than MAX_IMPLEMENTATIONS."""
    if pattern in known:
        return [pattern]
    try:
        rx = re.compile(pattern)
    except re.error:
        rx = None
    hits = [k for k in known if pattern in k or (rx is not None and rx.search(k))]
    if not hits:
        near = difflib.get_close_matches(pattern, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise HistoryError(f"no stored result for implementation '{pattern}' (a name, a part of one or a regular "
                           f"expression){hint}")
    if len(hits) > MAX_IMPLEMENTATIONS:
        listed = "\n  ".join(hits[:20]) + ("\n  ..." if len(hits) > 20 else "")
        raise HistoryError(f"'{pattern}' matches {len(hits)} implementations (at most {MAX_IMPLEMENTATIONS} are drawn); "
                           f"narrow the regular expression, e.g. anchor it or add a parameter:\n  {listed}")
    return hits


def history(sources: Any, implementation: str, problem: str | None = None, contract: str | None = None,
            store: str | Path = DEFAULT_STORE) -> History:
    """Rows of the implementation(s) `implementation` names (see match_implementations) across every run of
    `sources`: a Store, a source (store.sources), or a list of them; `store` is where run ids are looked up."""
    if isinstance(sources, (str, Path)) or hasattr(sources, "results"):
        sources = [sources]
    rows = read_runs(sources, store)
    names = match_implementations(implementation, sorted(set(rows["implementation"])))
    rows = rows[rows["implementation"].isin(names)]
    for col, value in (("problem", problem), ("contract", contract)):
        if value is not None:
            if value not in set(rows[col]):
                have = ", ".join(sorted(set(rows[col]), key=problem_sort_key if col == "problem" else str))
                raise HistoryError(f"{implementation} has no stored row for {col} '{value}' (it has: {have})")
            rows = rows[rows[col] == value]
    samples = rows["samples_ms"].map(_decode_samples) if "samples_ms" in rows else pd.Series([[]] * len(rows))
    df = normalise_rows(rows.drop(columns=[c for c in ("samples_ms", "checks") if c in rows]))
    for col in ("git_commit", "git_dirty", "gpu", "source", "started_at"):
        df[col] = rows[col].map(lambda v: "" if pd.isna(v) else str(v)).to_numpy() if col in rows else ""
    cis = [rate_ci(f, s) for f, s in zip(df["flops"], samples)]
    df["tflops_ci_lo"] = [c[0] if c else math.nan for c in cis]
    df["tflops_ci_hi"] = [c[1] if c else math.nan for c in cis]
    df["git_commit"] = df["git_commit"].str[:10]
    df["_p"] = df["problem"].map(problem_sort_key)
    df = df.sort_values(["started_at", "run_id", "implementation", "contract", "_p"]).reset_index(drop=True)
    notes = []
    if df["gpu"].nunique() > 1:
        notes.append("rows come from several GPUs: compare % of baseline / % of peak across them, not TFLOP/s")
    dirty = df[df["git_dirty"].astype(str).str.lower().isin(["true", "1"])]["run_id"].nunique()
    if dirty:
        notes.append(f"{dirty} run(s) were made from a dirty working tree: their commit is not the whole story")
    label = names[0] if len(names) == 1 else implementation
    return History(label, df[HISTORY_COLUMNS].copy(), notes)


def _decode_samples(value: Any) -> list:
    if isinstance(value, str):
        try:
            import json

            value = json.loads(value)
        except ValueError:
            return []
    return list(samples_of(value))


# -- output -------------------------------------------------------------------------------------------------

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
    return out.drop(columns=["git_dirty", "tflops_ci_lo", "tflops_ci_hi"]).rename(columns={"median_ci_rel": "median CI"})


def plot_history(h: History, out_dir: Path) -> tuple[list[Path], str]:
    """TFLOP/s with its 95% CI band (and % of baseline when known) per run; one series per (implementation,
    contract, problem, GPU); axes zoomed to the data."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.transforms import blended_transform_factory

    from .report.labels import legend_labels, wrap
    from .report.plots import save_figure
    from .report.plots.common import zoom_to_data

    t = h.table.copy()
    runs = t.drop_duplicates("run_id")[["run_id", "started_at", "git_commit"]].reset_index(drop=True)
    if len(runs) < 1:
        return [], "no runs"
    pos = {r: i for i, r in enumerate(runs["run_id"])}
    t["x"] = t["run_id"].map(pos)
    names = legend_labels(t["implementation"])
    parts = [c for c in ("implementation", "contract", "problem", "gpu") if c == "problem" or t[c].nunique() > 1]
    t["series"] = [" ".join(names[r["implementation"]] if c == "implementation" else str(r[c]) for c in parts)
                   for _, r in t.iterrows()]
    series = list(dict.fromkeys(t.sort_values("problem", key=lambda s: s.map(problem_sort_key))["series"]))
    caption = []
    if len(series) > MAX_SERIES:
        caption.append(f"{len(series) - MAX_SERIES} series of smaller problems left out; use --problem to pick one")
        series = series[-MAX_SERIES:]
    t = t[t["series"].isin(series)]
    panels = [("tflops", "TFLOP/s (logical)")]
    pct = t["pct_of_baseline"].dropna()
    if len(pct) and not np.allclose(pct, 100.0):  # the baseline's own history is 100% throughout: no panel
        panels.append(("pct_of_baseline", "% of same-run baseline"))
    fig = Figure(figsize=(max(7.5, 0.55 * len(runs) + 4.5), 3.2 * len(panels) + 1.3))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    cmap = matplotlib.colormaps["tab10"]
    for ax, (col, label) in zip(axes, panels):
        shown = []
        for i, s in enumerate(series):
            part = t[t["series"] == s].sort_values("x")
            good = part[part["status"] == "PASS"]
            color = cmap(i % 10)
            ax.plot(good["x"], good[col], marker="o", markersize=4, color=color, label=wrap(s, 50))
            shown.append(good[col].to_numpy(dtype=float))
            if col == "tflops" and good["tflops_ci_lo"].notna().any():
                ax.fill_between(good["x"], good["tflops_ci_lo"], good["tflops_ci_hi"], color=color, alpha=0.18,
                                linewidth=0)
                shown += [good["tflops_ci_lo"].to_numpy(dtype=float), good["tflops_ci_hi"].to_numpy(dtype=float)]
            bad = part[part["status"] != "PASS"]
            if len(bad):  # a run where the row did not pass: a red x on the axis' bottom edge
                ax.plot(bad["x"], [0.02] * len(bad), linestyle="none", marker="x", color="red", markersize=8,
                        transform=blended_transform_factory(ax.transData, ax.transAxes), clip_on=False)
        zoom_to_data(ax, np.concatenate(shown) if shown else np.array([]))
        if col == "pct_of_baseline":
            lo, hi = ax.get_ylim()
            if lo <= 100 <= hi:
                ax.axhline(100, color="black", linestyle="--", linewidth=1.2)
                ax.annotate("baseline = 100%", xy=(0.01, 100), xycoords=("axes fraction", "data"), va="bottom",
                            fontsize=7)
        ax.set_ylabel(label + "\n(axis fitted to the data)", fontsize=8)
        ax.grid(True, alpha=0.3)
    labels = [f"{str(r.started_at)[:10]}\n{r.git_commit[:7] or '?'}" for r in runs.itertuples()]
    step = max(1, math.ceil(len(runs) / 25))
    axes[-1].set_xticks(range(0, len(runs), step))
    axes[-1].set_xticklabels(labels[::step], fontsize=7, rotation=0 if len(runs) <= 10 else 45,
                             ha="center" if len(runs) <= 10 else "right")
    axes[-1].set_xlim(-0.5, len(runs) - 0.5)
    axes[-1].set_xlabel("run (date, git commit), oldest first")
    axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, title=" ".join(parts),
                   title_fontsize=7)
    gpus = ", ".join(g for g in dict.fromkeys(t["gpu"]) if g) or "unknown GPU"
    axes[0].set_title(f"{gpus} — history of {h.implementation}", fontsize=9)
    caption.append("band: 95% CI of the median from the raw samples")
    if (t["status"] != "PASS").any():
        caption.append("a red x on the bottom edge marks a run where the row did not PASS")
    files = save_figure(fig, out_dir, "history")
    return files, "; ".join(caption)


def write_history(h: History, out_dir: str | Path) -> list[Path]:
    """history.csv (full precision), history.md, history.html and history.png/.svg."""
    files, caption = plot_history(h, Path(out_dir))
    display = display_history(h.table)
    constant = [c for c in ("gpu", "implementation", "contract", "problem") if display[c].nunique() == 1]
    notes = [f"{c}: {display[c].iloc[0]} (every row)" for c in constant] + list(h.notes)
    return write_table_page(out_dir, "history", f"gemmcompare history: {h.implementation}", h.table,
                            display.drop(columns=constant), plot_files=files, caption=caption, notes=notes)
