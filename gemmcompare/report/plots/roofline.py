"""The roofline: measured points (with the CI of their rate) under the compute ceiling and the memory
ceiling, each problem named once above its column of points (arithmetic intensity is a property of the
shape, so every implementation of a problem sits at the same x)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ... import peaks as _peaks
from ...contracts.precision import BUILTIN_CONTRACTS
from ..bandwidth import memory_rates
from ..stats import rate_ci
from .common import (CI_NOTE, PASS_ONLY_NOTE, Palette, Plot, contract_groups, errorbar, finite, impl_order, legend,
                     save_figure, TickLabels)

LABEL_GAP_IN = 0.55  # problem labels closer than this (inches, along x) are stacked
LINE_IN = 0.13  # one line of a bandwidth label (6.5 pt), inches
BANDWIDTH_NOTE = ("on a memory-bound problem the fastest row carries its achieved bandwidth (unique bytes / median "
                  "time) and its % of the HBM roofline; every row's is in the tables and the bandwidth plot; ")
CROWDED_NOTE = ("too many memory-bound problems share an intensity for their bandwidth to be written here: the "
                "bandwidth plot has every row's GB/s and % of the HBM roofline; ")


def bandwidth_labels(ok: pd.DataFrame, lo: float, hi: float, ymin: float, top: float, width_in: float,
                     height_in: float) -> list[tuple[float, float, str, int]] | None:
    """(x, y, text, lines down) of each memory-bound problem's label: the fastest row's GB/s and % of the HBM
    roofline beside its point (every row would pile up in one column), moved down a line while it would
    overlap one already placed. None when they do not fit: a label that has to go down more than one line
    (three problems or more at one intensity and rate: the lines would stack into a list far from the points
    they name, over each other and off the axes, as 30 decode shapes at 4 intensities do)."""
    rates = ok.join(memory_rates(ok))
    placed: list[tuple[float, float]] = []  # (x, y) of placed labels' left edges, inches
    labels = []
    for _problem, pts in rates[rates["memory_bound"] & rates["pct_of_hbm_roofline"].notna()].groupby("problem"):
        r = pts.loc[pts["median_ms"].idxmin()]
        pct = r["pct_of_hbm_roofline"]
        text = f"{r['achieved_gbs']:.0f} GB/s, {pct:{'.0f' if pct >= 10 else '.2g'}}% of HBM roofline"  # 0.34%, not 0%
        x_in = math.log10(r["ai"] / lo) / math.log10(hi / lo) * width_in + 0.1
        y_in = math.log10(r["tflops"] / ymin) / math.log10(top / ymin) * height_in
        drop = 0
        while any(abs(x_in - x) < len(text) * 0.055 and abs(y_in - drop * LINE_IN - y) < 0.12 for x, y in placed):
            drop += 1
        if drop > 1 or y_in - drop * LINE_IN < LINE_IN / 2:
            return None
        placed.append((x_in, y_in - drop * LINE_IN))
        labels.append((r["ai"], r["tflops"], text, drop))
    return labels


def label_bandwidth(ax, ok: pd.DataFrame, lo: float, hi: float, ymin: float, top: float) -> str:
    """Writes bandwidth_labels beside their points where they fit. Returns the caption's note: what was
    written, where the bandwidth plot has them instead, or '' (no memory-bound problem)."""
    labels = bandwidth_labels(ok, lo, hi, ymin, top, ax.figure.get_figwidth() * 0.72, ax.figure.get_figheight() * 0.8)
    if labels is None:
        return CROWDED_NOTE
    for x, y, text, drop in labels:
        ax.annotate(text, (x, y), xytext=(7, -9.4 * drop), textcoords="offset points", fontsize=6.5, va="center",
                    color="#333333", zorder=6, bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.75))
    return BANDWIDTH_NOTE if labels else ""


def ceilings(rows: pd.DataFrame, gpu: str, contract: str) -> tuple[float | None, float | None, str]:
    """(compute peak TFLOP/s, bandwidth bytes/s, source) for a roofline: the rows' own peak_tflops when the runner
    filled it, else the peaks table by GPU name and contract."""
    peak = finite(rows["peak_tflops"])
    compute = float(np.median(peak)) if len(peak) else None
    table = _peaks.peak_for(gpu, BUILTIN_CONTRACTS.get(contract))  # a spec-declared contract: rows' peak only
    if compute is None and table is not None:
        compute = table[0]
    bandwidth = _peaks.bandwidth_for(gpu)
    info = _peaks.device_peaks(gpu)
    return compute, bandwidth, info.source if info else "datasheet"


def label_problems(ax, ok: pd.DataFrame, lo: float, hi: float, ceiling: float) -> float:
    """Each problem's name in a band above the compute ceiling, with a leader line down to its column of points;
    names that would overlap go up a level. Returns the y the axis must reach to show every level."""
    tops = ok.groupby("problem").agg(ai=("ai", "first"), top=("tflops", "max")).sort_values("ai")
    per_decade = ax.figure.get_figwidth() * 0.72 / max(math.log10(hi / lo), 1e-9)  # inches per decade of x
    right_edges: list[float] = []  # per level, where its last label ends (inches)
    y0, step, top_y = ceiling * 1.2, 1.3, ceiling * 1.6
    for problem, r in tops.iterrows():
        x_in = math.log10(r["ai"] / lo) * per_decade
        half = len(problem) * 0.06 / 2 + 0.06  # ~0.06 in per character at 7 pt
        level = next((i for i, edge in enumerate(right_edges) if edge < x_in - half), len(right_edges))
        if level == len(right_edges):
            right_edges.append(0.0)
        right_edges[level] = x_in + half
        y = y0 * step ** level
        top_y = max(top_y, y * 1.45)
        ax.annotate(problem, xy=(r["ai"], r["top"]), xytext=(r["ai"], y), textcoords="data", ha="center",
                    va="bottom", fontsize=7, color="#333333",
                    arrowprops=dict(arrowstyle="-", color="#aaaaaa", linewidth=0.6, shrinkA=1, shrinkB=4))
    return top_y


def plot_roofline(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        for gpu in dict.fromkeys(part["gpu"]):
            sub = part[part["gpu"] == gpu]
            title = f"{gpu} — {contract}: roofline"
            ok = sub[(sub["status"] == "PASS") & sub["tflops"].notna() & (sub["unique_bytes"] > 0)].copy()
            if ok.empty:
                plots.append(Plot("roofline", title, skipped="no passing row with unique bytes and a time"))
                continue
            compute, bandwidth, source = ceilings(ok, gpu, contract)
            if compute is None or bandwidth is None:
                plots.append(Plot("roofline", title, skipped=f"no datasheet peaks for '{gpu}' in gemmcompare/peaks.py"))
                continue
            ok["ai"] = ok["flops"] / ok["unique_bytes"]
            palette = Palette(sub)
            knee = compute * 1e12 / bandwidth
            lo = min(ok["ai"].min(), knee) / 4
            hi = max(ok["ai"].max(), knee) * 4
            fig = Figure(figsize=(8.5, 5.4))
            ax = fig.add_subplot()
            xs = np.geomspace(lo, hi, 200)
            (roof,) = ax.plot(xs, np.minimum(compute, bandwidth * xs / 1e12), color="dimgrey", linewidth=2, zorder=2)
            handles = [roof]
            labels = [f"ceilings: {compute:.0f} TFLOP/s, {bandwidth / 1e12:.2f} TB/s"]
            for name in impl_order(ok):
                pts = ok[ok["implementation"] == name]
                style = palette.style(name, line=False)
                if name in palette.baselines:
                    style.update(markerfacecolor="none", markeredgewidth=2, markersize=8)
                ci = [rate_ci(f, s) for f, s in zip(pts["flops"], pts["samples_ms"])]
                handles.append(errorbar(ax, pts["ai"].to_numpy(), pts["tflops"].to_numpy(), ci, style, capsize=1.5))
                labels.append(palette.text(name))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ymin = min(float(ok["tflops"].min()), bandwidth * lo / 1e12) / 2
            ax.set_xlim(lo, hi)
            top = label_problems(ax, ok, lo, hi, compute)
            ax.set_ylim(ymin, top)
            bandwidth_note = label_bandwidth(ax, ok, lo, hi, ymin, top)
            few_decades = math.log10(top / ymin) < 2.5  # label 2x and 5x minor ticks too
            ax.yaxis.set_major_formatter(TickLabels())
            ax.yaxis.set_minor_formatter(TickLabels(leading=(2, 5)) if few_decades else NullFormatter())
            ax.set_xlabel("arithmetic intensity, FLOP/byte (2·M·N·K / unique bytes moved)")
            ax.set_ylabel("TFLOP/s (logical)")
            ax.grid(True, which="both", alpha=0.25)
            ax.set_title(title, fontsize=10)
            legend(fig, ax, handles, labels)
            plots.append(Plot("roofline", title, save_figure(fig, out_dir, f"roofline_{contract}_{gpu}"),
                              caption=f"ceilings: {source}; unique bytes = A and B read once, C written once; each "
                                      f"problem is named above its points; {bandwidth_note}"
                                      f"{CI_NOTE}; {PASS_ONLY_NOTE}"))
    return plots
