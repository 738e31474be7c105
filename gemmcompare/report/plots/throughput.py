"""TFLOP/s by problem: a true size axis with lines when the problems are one family of shapes (a square sweep,
or one dimension varying), else one category per problem, implementations side by side, no lines between
unrelated shapes. Error bars: the 95% CI of the median from the raw samples. A log axis when the rates span
more than RATE_SPAN_LOG (small problems would sit flat on a 0-1000 TFLOP/s axis)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..stats import rate_ci
from .common import (CI_NOTE, PASS_ONLY_NOTE, Palette, Plot, contract_groups, device, errorbar, finite, impl_order, legend,
                     passing, pow2_axis, problem_axis, problems_by_size, save_figure, size_axis, TickLabels)

RATE_SPAN_LOG = 20.0  # max / min rate beyond which the rate axis is logarithmic
PEAK_FAR = 50.0  # on a log axis, a peak this many times above every row would squeeze the rows: left out




def rate_axis(ax, values, label: str) -> bool:
    """Linear from 0, or log when the values span more than RATE_SPAN_LOG; returns True for log."""
    vals = finite(values)
    vals = vals[vals > 0]
    log = len(vals) > 1 and vals.max() / vals.min() > RATE_SPAN_LOG
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(TickLabels())
        ax.set_ylabel(label + " (log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
    return log


def draw_throughput(ax, rows: pd.DataFrame, palette: Palette, column: str = "tflops") -> tuple[list, list[str], bool]:
    """Draw `column` (tflops or pct_of_peak) per problem on ax; returns (handles, labels, log axis)."""
    ok = passing(rows, column)
    if ok.empty:
        return [], [], False
    true_size = size_axis(ok)
    problems = problems_by_size(ok)
    names = impl_order(ok)
    slot = 0.8 / max(1, len(names))
    handles, labels = [], []
    for j, name in enumerate(names):
        part = ok[ok["implementation"] == name].copy()
        if column == "tflops":
            ci = [rate_ci(f, s) for f, s in zip(part["flops"], part["samples_ms"])]
        else:  # % of peak scales like the rate
            ci = [None if c is None else (v * c[0] / t, v * c[1] / t) if t else None
                  for c, v, t in zip((rate_ci(f, s) for f, s in zip(part["flops"], part["samples_ms"])),
                                     part[column], part["tflops"])]
        if true_size is not None:
            part["x"] = true_size[0].loc[part.index]
            order = np.argsort(part["x"].to_numpy())
            x = part["x"].to_numpy()[order]
            y = part[column].to_numpy()[order]
            ci = [ci[i] for i in order]
            style = palette.style(name, line=True)
        else:
            x = np.array([problems.index(p) for p in part["problem"]]) + (j - (len(names) - 1) / 2) * slot
            y = part[column].to_numpy()
            style = palette.style(name, line=False)
        handles.append(errorbar(ax, x, y, ci, style))
        labels.append(palette.text(name))
    if true_size is not None:
        pow2_axis(ax, true_size[0])
        ax.set_xlabel(true_size[1])
    else:
        problem_axis(ax, problems)
        for i in range(1, len(problems)):  # a faint rule between categories
            ax.axvline(i - 0.5, color="#dddddd", linewidth=0.8, zorder=0)
    what = "TFLOP/s (logical 2·M·N·K / median time)" if column == "tflops" else "% of datasheet peak"
    log = rate_axis(ax, ok[column], what)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    return handles, labels, log


def plot_throughput_vs_size(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        title = f"{device(part)} — {contract}: throughput by problem"
        ok = passing(part, "tflops")
        if ok.empty:
            plots.append(Plot("throughput_vs_size", title, skipped="no passing row with a time"))
            continue
        if ok["problem"].nunique() < 2:
            plots.append(Plot("throughput_vs_size", title, skipped="one problem size only"))
            continue
        if part["gpu"].nunique() > 1:
            plots.append(Plot("throughput_vs_size", title, skipped="rows from several GPUs: see the architectures plot"))
            continue
        palette = Palette(part)
        n_problems = ok["problem"].nunique()
        fig = Figure(figsize=(max(8.0, min(14.0, 2.0 + 0.9 * n_problems + 0.08 * len(ok))), 4.8))
        ax = fig.add_subplot()
        handles, labels, log = draw_throughput(ax, part, palette)
        peak = finite(ok["peak_tflops"])
        caption = f"{CI_NOTE}; {PASS_ONLY_NOTE}"
        if len(peak) and log and float(ok["tflops"].max()) < float(np.median(peak)) / PEAK_FAR:
            caption = f"datasheet peak {float(np.median(peak)):.0f} TFLOP/s, far above every row (not drawn); " + caption
        elif len(peak):
            p = float(np.median(peak))
            ax.axhline(p, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"datasheet peak {p:.0f} TFLOP/s", xy=(0.01, p), xycoords=("axes fraction", "data"),
                        va="bottom", fontsize=8, color="grey")
            if log:
                ax.set_ylim(top=p * 1.6)
            else:
                ax.set_ylim(0, max(p, float(ok["tflops"].max())) * 1.08)
        ax.set_title(title, fontsize=10)
        legend(fig, ax, handles, labels)
        if size_axis(ok) is None:
            caption = "problems are categories ordered by size, no lines join different shapes; " + caption
        plots.append(Plot("throughput_vs_size", title, save_figure(fig, out_dir, f"throughput_{contract}"),
                          caption=caption))
    return plots
