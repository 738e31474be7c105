"""The dashboard's figures: a series page's three panels (the implementations' figures with CI bands and
flagged steps; the baseline's own drift; the SM clock with THROTTLED runs), and several GPUs side by side."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

from ..verdicts import FAILED
from ..files import slug
from ..report.plots.common import DPI, Palette, legend, zoom_to_data
from .series import METRICS, Series
from .steps import STEP_VERDICTS

MAX_LINES = 8  # implementations drawn besides the baseline; the tables list every one
STEP_MARKERS = {"SLOWER": ("v", "#c62828"), "FASTER": ("^", "#2e7d32"), "REGRESSION": ("X", "#b71c1c"),
                "FIXED": ("P", "#2e7d32")}


def drawn_implementations(s: Series, max_lines: int = MAX_LINES) -> tuple[list[str], int]:
    """The baseline, then up to max_lines others: those with flagged steps first, then those measured in the
    most runs, then the fastest in the latest run. Returns (names, how many were left out)."""
    pts = s.points[np.isfinite(s.points["value"].astype(float)) | s.points["status"].isin(FAILED)]
    steps = s.steps[s.steps["verdict"].isin(STEP_VERDICTS)]
    base = s.baseline
    stats = pts.groupby("implementation").agg(runs=("x", "nunique"), last=("x", "max"))
    latest = pts.sort_values("x").drop_duplicates("implementation", keep="last").set_index("implementation")["value"]
    stats["flags"] = steps["implementation"].value_counts().reindex(stats.index).fillna(0)
    stats["latest"] = latest.reindex(stats.index).fillna(-math.inf)
    others = stats.drop(index=[base] if base in stats.index else [], errors="ignore")
    others = others.sort_values(["flags", "runs", "latest"], ascending=False)
    names = ([base] if base in stats.index else []) + list(others.index[:max_lines])
    return names, max(0, len(others) - max_lines)


def save_png(fig: Figure, out_dir: Path, stem: str) -> Path:
    """fig as out_dir/<stem>.png, as matplotlib draws it: a site is not committed, so its figures skip the
    report's 256-colour palette (plots/common.py), which took half of a series figure's time for a tenth
    fewer bytes."""
    path = Path(out_dir) / f"{slug(stem)}.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def _run_axis(ax, s: Series) -> None:
    labels = [r.label.replace(" ", "\n", 1) for r in s.runs]
    n = len(labels)
    step = max(1, math.ceil(n / 20))
    ax.set_xticks(range(0, n, step))
    ax.set_xticklabels(labels[::step], fontsize=7, rotation=0 if n <= 8 else 45, ha="center" if n <= 8 else "right")
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_xlabel("run (date, git commit), oldest first")


def draw_metric(ax, s: Series, names: list[str], palette: Palette) -> list:
    """Each drawn implementation's figure with its CI band, THROTTLED points ringed in red, flagged steps
    marked at the later run; returns the legend handles."""
    handles = []
    shown = []
    hit = blended_transform_factory(ax.transData, ax.transAxes)
    for name in names:
        part = s.points[s.points["implementation"] == name].sort_values("x")
        good = part[np.isfinite(part["value"].astype(float))]
        style = palette.style(name)
        (line,) = ax.plot(good["x"], good["value"], **style)
        handles.append((line, palette.text(name)))
        shown.append(good["value"].to_numpy(dtype=float))
        if good["lo"].notna().any():
            ax.fill_between(good["x"], good["lo"], good["hi"], color=style["color"], alpha=0.15, linewidth=0)
            shown += [good["lo"].to_numpy(dtype=float), good["hi"].to_numpy(dtype=float)]
        hot = good[good["throttled"]]
        ax.plot(hot["x"], hot["value"], linestyle="none", marker="o", markersize=13, markerfacecolor="none",
                markeredgecolor="red", markeredgewidth=1.5, zorder=5)
        bad = part[part["status"].isin(FAILED)]  # broke: a red x on the bottom edge (a SKIP is not drawn)
        ax.plot(bad["x"], [0.03] * len(bad), linestyle="none", marker="x", color="red", markersize=8,
                transform=hit, clip_on=False)
        steps = s.steps[(s.steps["implementation"] == name) & s.steps["verdict"].isin(STEP_VERDICTS)]
        for _, st in steps.iterrows():
            marker, color = STEP_MARKERS[st["verdict"]]
            y = good.loc[good["x"] == st["x"], "value"]
            if len(y):
                ax.plot([st["x"]], [y.iloc[0]], marker=marker, color=color, markersize=11, markeredgecolor="white",
                        zorder=6, linestyle="none")
            else:
                ax.plot([st["x"]], [0.03], marker=marker, color=color, markersize=11, transform=hit, clip_on=False)
    zoom_to_data(ax, np.concatenate(shown) if shown else np.array([]))
    ax.set_ylabel(METRICS[s.metric] + "\n(axis fitted to the data)", fontsize=8)
    ax.grid(True, alpha=0.3)
    return handles


def _draw_baseline_drift(ax, s: Series, threshold: float) -> None:
    base = s.baseline
    part = s.points[(s.points["implementation"] == base) & (s.points["status"] == "PASS")].sort_values("x")
    part = part[np.isfinite(part["median_ms"].astype(float))]
    if base is None or part.empty:
        ax.text(0.5, 0.5, "no baseline row in these runs", transform=ax.transAxes, ha="center", va="center")
        ax.set_yticks([])
        return
    first = float(part["median_ms"].iloc[0])
    rel = 100 * (part["median_ms"] / first - 1)
    ax.axhspan(-100 * threshold, 100 * threshold, color="#e0e0e0", zorder=0, label=f"±{100 * threshold:g}% threshold")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.plot(part["x"], rel, color="black", marker="s", markersize=5, linestyle="--", label=f"{base} time")
    if part["ms_lo"].notna().any():
        ax.fill_between(part["x"], 100 * (part["ms_lo"] / first - 1), 100 * (part["ms_hi"] / first - 1),
                        color="black", alpha=0.12, linewidth=0)
    lo, hi = ax.get_ylim()
    ax.set_ylim(min(lo, -150 * threshold), max(hi, 150 * threshold))
    ax.set_ylabel("baseline time vs\nits first run (%)", fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.grid(True, alpha=0.3)


def _draw_clock(ax, s: Series) -> None:
    per_run = s.points.groupby("x").agg(clock=("sm_clock_mhz", "median"), top=("max_sm_clock_mhz", "max"),
                                        hot=("throttled", "any")).reindex(range(len(s.runs)))
    if per_run["clock"].notna().any():
        ax.plot(per_run.index, per_run["clock"], color="#455a64", marker="o", markersize=4, label="SM clock (median)")
        if per_run["top"].notna().any():
            ax.axhline(float(per_run["top"].max()), color="#455a64", linestyle=":", linewidth=1, label="max SM clock")
    else:
        ax.text(0.5, 0.5, "no SM clock recorded", transform=ax.transAxes, ha="center", va="center")
    hot = per_run[per_run["hot"].fillna(False).astype(bool)]
    for x in hot.index:
        ax.axvspan(x - 0.4, x + 0.4, color="#ffcdd2", zorder=0)
        ax.text(x, 0.5, "THROTTLED", rotation=90, ha="center", va="center", fontsize=7, color="#b71c1c",
                transform=blended_transform_factory(ax.transData, ax.transAxes))
    ax.set_ylabel("SM clock (MHz)", fontsize=8)
    if per_run["clock"].notna().any():
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.grid(True, alpha=0.3)


def plot_series(s: Series, out_dir: Path, stem: str, threshold: float) -> tuple[Path, str]:
    """The series page's figure as out_dir/<stem>.png; returns (path, caption)."""
    names, left_out = drawn_implementations(s)
    palette = Palette(s.points[s.points["implementation"].isin(names)])
    fig = Figure(figsize=(min(15.0, max(9.0, 0.35 * len(s.runs) + 6)), 8.6))
    axes = fig.subplots(3, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.3, 1.1]})
    handles = draw_metric(axes[0], s, names, palette)
    for verdict, (marker, color) in STEP_MARKERS.items():
        if (s.steps["verdict"] == verdict).any():
            handles.append((axes[0].plot([], [], marker=marker, color=color, linestyle="none")[0], f"step: {verdict}"))
    if s.points["throttled"].any():
        handles.append((axes[0].plot([], [], marker="o", markerfacecolor="none", markeredgecolor="red",
                                     linestyle="none")[0], "THROTTLED row"))
    legend(fig, axes[0], [h for h, _ in handles], [t for _, t in handles])
    axes[0].set_title(f"{s.gpu} — {s.contract} {s.problem}", fontsize=10)
    _draw_baseline_drift(axes[1], s, threshold)
    _draw_clock(axes[2], s)
    _run_axis(axes[2], s)
    path = save_png(fig, out_dir, stem)
    caption = ["bands: 95% CI of the median from the raw samples",
               "triangles: steps flagged by compare's verdict against the implementation's previous run",
               "a red ring: a THROTTLED row (a power or thermal cap in most sample batches)"]
    if s.points["status"].isin(FAILED).any():
        caption.append("a red x on the bottom edge: a run where the row FAILed, CRASHed, TIMEd OUT or did not build")
    if left_out:
        caption.append(f"{left_out} more implementations are in the table, not drawn")
    return path, "; ".join(caption)


def plot_across(series: list[Series], out_dir: Path, stem: str) -> Path:
    """One panel per GPU side by side, the same y axis (use % of peak to compare GPUs of different sizes)."""
    fig = Figure(figsize=(4.8 * len(series) + 3, 5.0))
    axes = fig.subplots(1, len(series), sharey=True, squeeze=False)[0]
    names = list(dict.fromkeys(n for s in series for n in drawn_implementations(s)[0]))
    palette = Palette(pd.concat([s.points for s in series], ignore_index=True).query("implementation in @names"))
    handles: dict[str, object] = {}
    for ax, s in zip(axes, series):
        for line, label in draw_metric(ax, s, [n for n in names if n in set(s.points["implementation"])], palette):
            handles.setdefault(label, line)
        ax.set_title(s.gpu, fontsize=9)
        _run_axis(ax, s)
    shown = np.concatenate([s.points["value"].to_numpy(dtype=float) for s in series])
    zoom_to_data(axes[0], shown)
    legend(fig, axes[-1], list(handles.values()), list(handles))
    fig.suptitle(f"{series[0].contract} {series[0].problem}: {METRICS[series[0].metric]}", fontsize=10)
    return save_png(fig, out_dir, stem)
