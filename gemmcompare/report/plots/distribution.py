"""The raw samples of every timed row, one panel per problem: a violin per implementation of each sample's
deviation from that row's own median, with the samples themselves as dots. This is where noise, a slow
first sample, a long tail or two clock levels (throttling) show; on the right, each row's median time and CV.
Deviations put every implementation on one scale however different their times are."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..data import THROTTLED_MOSTLY
from ..labels import wrap
from ..stats import MIN_SAMPLES, samples_of
from .common import Palette, Plot, contract_groups, device, impl_order, panel_axes, problems_by_size, save_figure

MAX_PANELS = 9
COLUMNS = 3


def fmt_time(ms: float) -> str:
    """A time for people: microseconds below 1 ms (small problems), else milliseconds; 3 significant digits."""
    return f"{ms * 1e3:.3g} µs" if ms < 1 else f"{ms:.4g} ms"


def _violin(ax, values, position):
    """A horizontal violin (matplotlib 3.10 named the argument `orientation`; older ones take `vert`)."""
    try:
        return ax.violinplot([values], positions=[position], orientation="horizontal", widths=0.8, showextrema=False)
    except TypeError:
        return ax.violinplot([values], positions=[position], vert=False, widths=0.8, showextrema=False)


def plot_distribution(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        title = f"{device(part)} — {contract}: sample distributions"
        timed = part[(part["status"] == "PASS") & (part["samples_ms"].map(lambda s: len(samples_of(s))) >= MIN_SAMPLES)]
        timed = timed.drop_duplicates(["gpu", "problem", "implementation"], keep="last")
        if timed.empty:
            plots.append(Plot("distribution", title, skipped=f"no passing row with {MIN_SAMPLES} or more samples"))
            continue
        if part["gpu"].nunique() > 1:
            plots.append(Plot("distribution", title, skipped="rows from several GPUs: one report per GPU shows them"))
            continue
        palette = Palette(part)
        problems = problems_by_size(timed)
        omitted = problems[:-MAX_PANELS] if len(problems) > MAX_PANELS else []
        problems = problems[-MAX_PANELS:]
        names = impl_order(timed[timed["problem"].isin(problems)])[::-1]  # barh-like: first name on top
        ncols = min(COLUMNS, len(problems))
        nrows = math.ceil(len(problems) / ncols)
        ylabels = [wrap(palette.text(n)) for n in names]
        label_in = 0.062 * max(len(line) for t in ylabels for line in t.split("\n")) + 0.3
        panel_in, gap_in = 3.0, 1.25  # the gap holds each row's median time and CV
        width = label_in + ncols * (panel_in + gap_in)
        fig = Figure(figsize=(width, nrows * (0.3 * len(names) + 1.0) + 0.6))
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
        throttled = 0
        for idx, ax, problem in panel_axes(axes, problems):
            sub = timed[timed["problem"] == problem].set_index("implementation")
            right = []
            for i, name in enumerate(names):
                if name not in sub.index:
                    right.append("")
                    continue
                s = samples_of(sub.loc[name, "samples_ms"])
                med = float(np.median(s))
                dev = (s / med - 1) * 100
                color = palette.style(name)["color"]
                if np.ptp(dev) > 0:
                    body = _violin(ax, dev, i)
                    for b in body["bodies"]:
                        b.set_facecolor(color)
                        b.set_alpha(0.35)
                        b.set_rasterized(True)
                jitter = np.random.default_rng(i).uniform(-0.18, 0.18, len(dev))  # fixed seed: same figure each time
                ax.scatter(dev, i + jitter, s=4, color=color, alpha=0.7, linewidths=0, zorder=3,
                           rasterized=True)  # thousands of dots: a bitmap inside the SVG, not one element each
                tf = sub.loc[name, "throttled_fraction"]
                mark = " T" if pd.notna(tf) and tf > THROTTLED_MOSTLY else ""
                throttled += bool(mark)
                cv = float(np.std(s, ddof=1) / np.mean(s)) if len(s) > 1 else 0.0
                right.append(f"{fmt_time(med)}  CV {100 * cv:.1f}%{mark}")
            ax.axvline(0, color="black", linewidth=0.8)
            ax.set_title(problem, fontsize=9)
            ax.grid(True, axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize=7)
            if idx // ncols == nrows - 1 or idx + ncols >= len(problems):
                ax.set_xlabel("sample / row median − 1 (%)", fontsize=8)
            ax.set_ylim(-0.6, len(names) - 0.4)
            twin = ax.twinx()
            twin.set_ylim(ax.get_ylim())
            twin.set_yticks(range(len(names)))
            twin.set_yticklabels(right, fontsize=6.5)
            twin.tick_params(axis="y", length=0)
        axes[0][0].set_yticks(range(len(names)))
        for r in range(nrows):
            axes[r][0].set_yticklabels(ylabels, fontsize=7)
        fig.subplots_adjust(left=label_in / width, right=1 - gap_in / width, wspace=gap_in / panel_in, hspace=0.45)
        fig.suptitle(title, fontsize=10)
        caption = ("each dot is one timed launch; violins: their density; right: the row's median time and coefficient "
                   "of variation")
        if throttled:
            caption += "; T: the row was throttled in most of its sample batches"
        if omitted:
            caption += f"; the {MAX_PANELS} largest problems shown, {len(omitted)} smaller left out"
        plots.append(Plot("distribution", title, save_figure(fig, out_dir, f"distribution_{contract}"), caption=caption))
    return plots
