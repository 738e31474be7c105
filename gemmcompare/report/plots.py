"""Report plots (matplotlib, no pyplot and no global backend change: each figure is drawn on its own Agg canvas).

Every plot is written as PNG and SVG, has units on its axes, the device and the contract in its title, and draws
the baseline distinctly (black, dashed, square markers). A plot the data cannot support (one problem size,
no baseline, no peaks for the device) is skipped with a note saying why, never drawn empty.

Plot kinds (the names a spec's `report: {plots: [...]}` may list): see PLOT_KINDS.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from .. import peaks as _peaks
from .kinds import PLOT_NAMES
from ..contracts.precision import BUILTIN_CONTRACTS
from .data import short_names, sorted_problems

# the baseline is drawn wide, black and dashed *under* the others, so a kernel that matches it stays visible on top
BASELINE_STYLE = dict(color="black", linestyle="--", linewidth=2.8, marker="s", markersize=7, zorder=2)
PASS_ONLY_NOTE = "only PASS rows are drawn: a wrong result has no meaningful speed"


@dataclass
class Plot:
    """One figure of a report, or the note of why it was not drawn."""

    kind: str
    title: str
    files: list[Path] = field(default_factory=list)  # [png, svg]
    skipped: str | None = None
    caption: str = ""

    @property
    def png(self) -> Path | None:
        return next((f for f in self.files if f.suffix == ".png"), None)

    @property
    def svg(self) -> Path | None:
        return next((f for f in self.files if f.suffix == ".svg"), None)


# -- helpers ---------------------------------------------------------------------------------------------

def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:80]


def _device(rows: pd.DataFrame) -> str:
    names = [g for g in dict.fromkeys(rows.get("gpu", pd.Series(dtype=str))) if g]
    return " vs ".join(names) if names else "unknown GPU"


def save_figure(fig: Figure, out_dir: Path, stem: str, formats=("png", "svg")) -> list[Path]:
    """Write fig as out_dir/<stem>.png and .svg. SVG ids are salted and its date left out, so re-rendering the same
    data gives the same file (committed reports diff cleanly)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with matplotlib.rc_context({"svg.hashsalt": "gemmcompare"}):
        for fmt in formats:
            path = out_dir / f"{_slug(stem)}.{fmt}"
            fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
            paths.append(path)
    return paths


def _colors(rows: pd.DataFrame) -> dict[str, tuple]:
    """One colour per non-baseline implementation of these rows (all statuses), so that an implementation keeps
    its colour in every plot of a contract whatever each plot leaves out."""
    names = [n for n in _impl_order(rows) if not rows.loc[rows["implementation"] == n, "is_baseline"].any()]
    cmap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def _style(name: str, is_baseline: bool, colors: dict) -> dict:
    if is_baseline:
        return dict(BASELINE_STYLE)
    return dict(color=colors.get(name, "grey"), linestyle="-", linewidth=1.5, marker="o", markersize=4.5, zorder=3)


def _legend(ax, n_entries: int):
    """The legend outside the axes on the right (implementation names are long), two columns past 14 entries."""
    if n_entries:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, ncol=1 if n_entries <= 14 else 2,
                  frameon=False, title="implementation", title_fontsize=8)


def _pow2_formatter():
    def fmt(v, _pos):
        if v <= 0:
            return ""
        return f"{v:g}" if v < 1e6 else f"{v:.3g}"
    return FuncFormatter(fmt)


def _impl_order(rows: pd.DataFrame) -> list[str]:
    """Baseline first, then the others by name: the same order in every legend of a report."""
    base = [n for n in dict.fromkeys(rows.loc[rows["is_baseline"], "implementation"])]
    rest = sorted(n for n in set(rows["implementation"]) if n not in base)
    return base + rest


def _labels(rows: pd.DataFrame) -> dict[str, str]:
    """Legend labels for every implementation of these rows (shortened together, so they agree across plots)."""
    names = _impl_order(rows)
    short = short_names(names)
    base = set(rows.loc[rows["is_baseline"], "implementation"])
    return {n: short[n] + (" (baseline)" if n in base else "") for n in names}


def _finite(values) -> np.ndarray:
    arr = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    return arr[np.isfinite(arr)]


def size_axis(rows: pd.DataFrame) -> tuple[pd.Series, str]:
    """The x of a problem-size plot: the edge when every problem is square, the one dimension that varies
    (others fixed), else the logical work in GFLOP (ticks then name the problems)."""
    m, n, k = rows["m"], rows["n"], rows["k"]
    if len(rows) and (m == n).all() and (n == k).all():
        return m.astype(float), "problem size M = N = K"
    varying = [d for d in ("m", "n", "k") if rows[d].nunique() > 1]
    if len(varying) == 1:
        d = varying[0]
        fixed = ", ".join(f"{o.upper()}={int(rows[o].iloc[0])}" for o in ("m", "n", "k") if o != d)
        return rows[d].astype(float), f"{d.upper()} ({fixed})"
    return rows["flops"].astype(float) / 1e9, "problem, placed by its logical work 2·M·N·K (GFLOP, log scale)"


def _size_xaxis(ax, rows: pd.DataFrame) -> pd.Series:
    """Put the problem-size axis on ax (log 2, one tick per size, at most 10) and return each row's x."""
    x, xlabel = size_axis(rows)
    xs = sorted(set(x))
    ticks = xs if len(xs) <= 10 else xs[:: math.ceil(len(xs) / 10)]
    ax.set_xscale("log", base=2)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks)
    if xlabel.startswith("problem, placed"):
        names = {xv: p for xv, p in zip(x, rows["problem"])}
        ax.set_xticklabels([names[t] for t in ticks], rotation=35, ha="right", fontsize=8)
    else:
        ax.xaxis.set_major_formatter(_pow2_formatter())
    if len(xs) == 1:
        ax.set_xlim(xs[0] / 2, xs[0] * 2)
    ax.set_xlabel(xlabel)
    return x


def _contract_groups(rows: pd.DataFrame):
    for contract in dict.fromkeys(rows["contract"]):
        yield contract, rows[rows["contract"] == contract]


# -- throughput vs size ------------------------------------------------------------------------------------

def _draw_throughput(ax, rows: pd.DataFrame, names: list[str], colors: dict, labels: dict) -> int:
    ok = rows[(rows["status"] == "PASS") & rows["tflops"].notna()].copy()
    if len(ok):
        ok["x"] = _size_xaxis(ax, ok)
    drawn = 0
    for name in names:
        part = ok[ok["implementation"] == name]
        if part.empty:
            continue
        part = part.groupby("x", as_index=False)["tflops"].max().sort_values("x")
        is_base = bool(rows.loc[rows["implementation"] == name, "is_baseline"].any())
        ax.plot(part["x"], part["tflops"], label=labels[name], **_style(name, is_base, colors))
        drawn += 1
    ax.set_ylabel("TFLOP/s (logical 2·M·N·K / median time)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    return drawn


def plot_throughput_vs_size(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in _contract_groups(rows):
        title = f"{_device(part)} — {contract}: throughput vs problem size"
        ok = part[(part["status"] == "PASS") & part["tflops"].notna()]
        if ok.empty:
            plots.append(Plot("throughput_vs_size", title, skipped="no passing row with a time"))
            continue
        x, _ = size_axis(ok)
        if x.nunique() < 2:
            plots.append(Plot("throughput_vs_size", title, skipped="one problem size only"))
            continue
        if part["gpu"].nunique() > 1:
            plots.append(Plot("throughput_vs_size", title,
                              skipped="rows from several GPUs: see the architectures plot"))
            continue
        names = _impl_order(ok)
        colors, labels = _colors(part), _labels(part)
        fig = Figure(figsize=(8, 4.8))
        ax = fig.add_subplot()
        n = _draw_throughput(ax, part, names, colors, labels)
        peak = _finite(ok["peak_tflops"])
        top = float(ok["tflops"].max())
        if len(peak):
            p = float(np.median(peak))
            ax.axhline(p, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"datasheet peak {p:.0f} TFLOP/s", xy=(0.01, p), xycoords=("axes fraction", "data"),
                        va="bottom", fontsize=8, color="grey")
            top = max(top, p)
        ax.set_ylim(0, top * 1.08)
        ax.set_title(title, fontsize=10)
        _legend(ax, n)
        plots.append(Plot("throughput_vs_size", title, save_figure(fig, out_dir, f"throughput_{contract}"),
                          caption=PASS_ONLY_NOTE))
    return plots


# -- % of baseline bars ------------------------------------------------------------------------------------

def plot_percent_of_baseline(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in _contract_groups(rows):
        title = f"{_device(part)} — {contract}: % of baseline by shape"
        ok = part[(part["status"] == "PASS") & part["pct_of_baseline"].notna() & ~part["is_baseline"]]
        if ok.empty:
            why = "no baseline in this run" if not part["is_baseline"].any() else "no passing non-baseline row"
            plots.append(Plot("percent_of_baseline", title, skipped=why))
            continue
        if part["gpu"].nunique() > 1:
            plots.append(Plot("percent_of_baseline", title,
                              skipped="rows from several GPUs: see the architectures plot"))
            continue
        problems = sorted_problems(ok["problem"])
        names = _impl_order(ok)
        colors, labels = _colors(part), _labels(part)
        slots = len(problems) * len(names)
        fig = Figure(figsize=(min(15, max(7, 0.2 * slots + 0.6 * len(problems) + 2)), 4.8))
        ax = fig.add_subplot()
        width = 0.8 / len(names)
        for j, name in enumerate(names):
            vals = [ok[(ok["problem"] == p) & (ok["implementation"] == name)]["pct_of_baseline"].max()
                    for p in problems]
            xs = np.arange(len(problems)) + (j - (len(names) - 1) / 2) * width
            bars = ax.bar(xs, vals, width * 0.95, color=colors[name], label=labels[name])
            if slots <= 24:
                ax.bar_label(bars, labels=[f"{v:.0f}" if np.isfinite(v) else "" for v in vals], fontsize=7,
                             padding=1)
        baseline = next(iter(dict.fromkeys(part.loc[part["is_baseline"], "implementation"])), "baseline")
        ax.axhline(100, **{k: v for k, v in BASELINE_STYLE.items() if k not in ("marker", "markersize")},
                   label=f"{short_names([baseline])[baseline]} (baseline) = 100%")
        ax.set_xticks(np.arange(len(problems)))
        group_inches = fig.get_figwidth() * 0.75 / len(problems)
        crowded = max(len(p) for p in problems) * 0.075 > group_inches  # ~0.075 in per character at 8 pt
        ax.set_xticklabels(problems, rotation=30 if crowded else 0, ha="right" if crowded else "center", fontsize=8)
        ax.set_xlabel("problem M×N×K")
        ax.set_ylabel("% of baseline (baseline time / time × 100)")
        ax.set_ylim(0, max(110, float(np.nanmax(ok["pct_of_baseline"])) * 1.12))
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(title, fontsize=10)
        if len(names) + 1 > 8:  # a long legend goes under a wide chart, not beside it
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22 if crowded else -0.12), fontsize=8,
                      ncol=3, frameon=False)
        else:
            _legend(ax, len(names) + 1)
        plots.append(Plot("percent_of_baseline", title, save_figure(fig, out_dir, f"pct_of_baseline_{contract}"),
                          caption="same-run baseline, same contract and problem; " + PASS_ONLY_NOTE))
    return plots


# -- roofline ---------------------------------------------------------------------------------------------

def ceilings(rows: pd.DataFrame, gpu: str, contract: str) -> tuple[float | None, float | None, str]:
    """(compute peak TFLOP/s, bandwidth bytes/s, source) for a roofline: the rows' own peak_tflops when the runner
    filled it, else the peaks table by GPU name and contract."""
    peak = _finite(rows["peak_tflops"])
    compute = float(np.median(peak)) if len(peak) else None
    table = _peaks.peak_for(gpu, BUILTIN_CONTRACTS.get(contract))  # a spec-declared contract: rows' peak only
    if compute is None and table is not None:
        compute = table[0]
    bandwidth = _peaks.bandwidth_for(gpu)
    info = _peaks.device_peaks(gpu)
    return compute, bandwidth, info.source if info else "datasheet"


def plot_roofline(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in _contract_groups(rows):
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
            names = _impl_order(ok)
            colors, labels = _colors(sub), _labels(sub)
            knee = compute * 1e12 / bandwidth
            lo = min(ok["ai"].min(), knee) / 4
            hi = max(ok["ai"].max(), knee) * 4
            fig = Figure(figsize=(8, 5))
            ax = fig.add_subplot()
            xs = np.geomspace(lo, hi, 200)
            ax.plot(xs, np.minimum(compute, bandwidth * xs / 1e12), color="dimgrey", linewidth=2, zorder=2)
            ax.annotate(f"compute ceiling {compute:.0f} TFLOP/s (flat)", xy=(hi / 1.1, compute * 1.08), ha="right",
                        va="bottom", fontsize=8, color="dimgrey")
            ax.annotate(f"memory ceiling {bandwidth / 1e12:.2f} TB/s (sloped)", xy=(lo * 1.1, compute * 1.08),
                        ha="left", va="bottom", fontsize=8, color="dimgrey")
            for name in names:
                pts = ok[ok["implementation"] == name]
                style = _style(name, bool(pts["is_baseline"].any()), colors)
                style.update(linestyle="none")
                if not pts["is_baseline"].any():
                    style.update(markersize=6, alpha=0.85)
                else:
                    style.update(markersize=8, markerfacecolor="none", markeredgewidth=2)
                ax.plot(pts["ai"], pts["tflops"], label=labels[name], **style)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ymin = min(float(ok["tflops"].min()), bandwidth * lo / 1e12) / 2
            ax.set_ylim(ymin, compute * 2)
            few_decades = math.log10(compute * 2 / ymin) < 2.5  # label 2x and 5x minor ticks too
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
            ax.yaxis.set_minor_formatter(FuncFormatter(
                lambda v, _pos: f"{v:g}" if few_decades and round(v / 10 ** math.floor(math.log10(v))) in (2, 5)
                else ""))
            ax.set_xlim(lo, hi)
            ax.set_xlabel("arithmetic intensity, FLOP/byte (2·M·N·K / unique bytes moved)")
            ax.set_ylabel("TFLOP/s (logical)")
            ax.grid(True, which="both", alpha=0.25)
            ax.set_title(title, fontsize=10)
            _legend(ax, len(names))
            plots.append(Plot("roofline", title, save_figure(fig, out_dir, f"roofline_{contract}_{gpu}"),
                              caption=f"ceilings: {source}; unique bytes = A and B read once, C written once; "
                                      + PASS_ONLY_NOTE))
    return plots


# -- error vs K --------------------------------------------------------------------------------------------

ERROR_PANELS = (("max_abs_err", "vs rounded-input reference (judges)"),
                ("max_abs_err_orig", "vs original-input reference (reported)"))


def _on_common_fixture(rows: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """The rows with their error columns taken from the first fixture every row checked, and its name;
    the rows unchanged (and None) when they share no fixture or carry no per-fixture checks."""
    if "checks" not in rows:
        return rows, None
    per_row = [{c.get("fixture"): c for c in (checks if isinstance(checks, list) else [])} for checks in rows["checks"]]
    if not per_row or not all(per_row):
        return rows, None
    order = [f for f in per_row[0] if f not in ("timed_output", "final_launch")]
    common = next((f for f in order if all(f in d for d in per_row)), None)
    if common is None:
        return rows, None
    out = rows.copy()
    for col in ("max_abs_err", "max_abs_err_orig"):
        out[col] = [d[common].get(col) for d in per_row]
    return out, common


def plot_error_vs_k(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in _contract_groups(rows):
        title = f"{_device(part)} — {contract}: max abs error vs K"
        has = part[part["max_abs_err"].notna() | part["max_abs_err_orig"].notna()]
        if has.empty:
            plots.append(Plot("error_vs_k", title, skipped="no error figures in the rows"))
            continue
        if has["k"].nunique() < 2:
            plots.append(Plot("error_vs_k", title, skipped="one K only"))
            continue
        names = _impl_order(has)
        colors, labels = _colors(part), _labels(part)
        # A FAIL row stops at its first failing fixture, so row-level maxima cover different fixtures;
        # where every row checked one fixture in common, plot that fixture's errors for everyone.
        has, fixture = _on_common_fixture(has)
        fig = Figure(figsize=(11, 4.6))
        axes = fig.subplots(1, 2, sharey=True)
        zeros = 0
        for ax, (col, subtitle) in zip(axes, ERROR_PANELS):
            for name in names:
                pts = has[has["implementation"] == name].groupby("k", as_index=False)[col].max().sort_values("k")
                zeros += int((pts[col] == 0).sum())
                pts = pts[pts[col] > 0]
                if pts.empty:
                    continue
                is_base = bool(has.loc[has["implementation"] == name, "is_baseline"].any())
                style = _style(name, is_base, colors)
                failed = set(has[(has["implementation"] == name) & (has["status"] == "FAIL")]["k"])
                ax.plot(pts["k"], pts[col], label=labels[name], **style)
                bad = pts[pts["k"].isin(failed)]
                if len(bad):
                    ax.plot(bad["k"], bad[col], linestyle="none", marker="x", color="red", markersize=9, zorder=6)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(_pow2_formatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
            ks = sorted(set(has["k"]))
            ax.set_xticks(ks if len(ks) <= 8 else ks[:: math.ceil(len(ks) / 8)])
            ax.set_yscale("log")
            ax.set_xlabel("K (reduction length)")
            ax.set_title(subtitle, fontsize=9)
            ax.grid(True, which="both", alpha=0.25)
        axes[0].set_ylabel(f"max |C − R| ({fixture} fixture)" if fixture else "max |C − R| over every fixture")
        fig.suptitle(title, fontsize=10)
        handles, lbls = axes[0].get_legend_handles_labels()
        if not handles:
            handles, lbls = axes[1].get_legend_handles_labels()
        fig.legend(handles, lbls, loc="upper left", bbox_to_anchor=(0.91, 0.88), fontsize=8, frameon=False,
                   title="implementation", title_fontsize=8)
        fig.subplots_adjust(right=0.9, wspace=0.06)
        caption = "max over problems with the same K; a red x marks a FAIL row"
        if zeros:
            caption += f"; {zeros} exact (zero-error) points cannot be drawn on a log axis and are left out"
        plots.append(Plot("error_vs_k", title, save_figure(fig, out_dir, f"error_vs_k_{contract}"), caption=caption))
    return plots


# -- two-parameter sweep heatmap -----------------------------------------------------------------------------

def _param_text(v) -> str:
    if isinstance(v, (list, tuple)):
        return "x".join(str(x) for x in v)
    return str(v)


def _sort_values(values: list[str]) -> list[str]:
    def key(v):
        nums = re.findall(r"-?\d+(?:\.\d+)?", v)
        return (0, [float(x) for x in nums], v) if nums and re.fullmatch(r"[-\d.x]+", v) else (1, [], v)
    return sorted(set(values), key=key)


def sweep_axes(family_rows: pd.DataFrame) -> list[str]:
    """The parameters that vary among a family's rows, most distinct values first."""
    table = pd.DataFrame([{k: _param_text(v) for k, v in (p or {}).items()} for p in family_rows["params"]])
    if table.empty:
        return []
    counts = {c: table[c].nunique(dropna=True) for c in table.columns}
    varying = [c for c in table.columns if counts[c] > 1]
    return sorted(varying, key=lambda c: -counts[c])


def plot_sweep_heatmap(rows: pd.DataFrame, out_dir: Path, max_problems: int = 4) -> list[Plot]:
    plots = []
    for contract, part in _contract_groups(rows):
        for family in dict.fromkeys(part["family"]):
            fam = part[(part["family"] == family) & ~part["is_baseline"]]
            axes_names = sweep_axes(fam)
            if len(axes_names) < 2:
                continue
            title = f"{_device(part)} — {contract}: {family} sweep, % of baseline"
            if fam["pct_of_baseline"].notna().sum() == 0:
                plots.append(Plot("heatmap", title, skipped="no % of baseline (no baseline row)"))
                continue
            px, py = axes_names[1], axes_names[0]  # most values on the y axis (rows read easier than columns)
            others = axes_names[2:]
            fam = fam.copy()
            fam["_x"] = [_param_text((p or {}).get(px)) for p in fam["params"]]
            fam["_y"] = [_param_text((p or {}).get(py)) for p in fam["params"]]
            xs, ys = _sort_values(list(fam["_x"])), _sort_values(list(fam["_y"]))
            problems = sorted_problems(fam["problem"])
            omitted = problems[:-max_problems] if len(problems) > max_problems else []
            problems = problems[-max_problems:]
            fig = Figure(figsize=(min(20, 1.2 + len(problems) * (0.8 * len(xs) + 1.6)), 0.55 * len(ys) + 2.2))
            axs = np.atleast_1d(fig.subplots(1, len(problems), squeeze=False)[0])
            vals_all = _finite(fam["pct_of_baseline"])
            span = max(5.0, float(np.max(np.abs(vals_all - 100)))) if len(vals_all) else 50.0
            norm = TwoSlopeNorm(vcenter=100, vmin=100 - span, vmax=100 + span)
            image = None
            for ax, problem in zip(axs, problems):
                sub = fam[fam["problem"] == problem]
                grid = np.full((len(ys), len(xs)), np.nan)
                text = [["" for _ in xs] for _ in ys]
                for _, r in sub.iterrows():
                    i, j = ys.index(r["_y"]), xs.index(r["_x"])
                    if r["status"] == "PASS" and np.isfinite(r["pct_of_baseline"]):
                        if not np.isfinite(grid[i, j]) or r["pct_of_baseline"] > grid[i, j]:
                            grid[i, j] = r["pct_of_baseline"]
                            text[i][j] = f"{r['pct_of_baseline']:.0f}"
                    elif not text[i][j]:
                        text[i][j] = r["status"]
                image = ax.imshow(grid, cmap="RdYlGn", norm=norm, aspect="auto")
                for i in range(len(ys)):
                    for j in range(len(xs)):
                        if text[i][j]:
                            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8,
                                    color="black" if text[i][j][0].isdigit() else "dimgrey")
                ax.set_xticks(range(len(xs)))
                ax.set_xticklabels(xs, fontsize=8, rotation=30 if max(map(len, xs)) > 8 else 0)
                ax.set_yticks(range(len(ys)))
                ax.set_yticklabels(ys if ax is axs[0] else [], fontsize=8)
                ax.set_xlabel(px)
                ax.set_title(problem, fontsize=9)
            axs[0].set_ylabel(py)
            cbar = fig.colorbar(image, ax=list(axs), shrink=0.9)
            cbar.set_label("% of baseline")
            fig.suptitle(title, fontsize=10)
            caption = "cells: % of the same-run baseline (100 = parity); non-PASS cells show their status"
            if others:
                caption += f"; also varying: {', '.join(others)} (each cell shows the best over them)"
            if omitted:
                caption += f"; the {max_problems} largest problems shown, {len(omitted)} smaller left out"
            plots.append(Plot("heatmap", title, save_figure(fig, out_dir, f"sweep_{contract}_{family}"),
                              caption=caption))
    if not plots:
        plots.append(Plot("heatmap", "two-parameter sweep",
                          skipped="no implementation family varies two or more parameters"))
    return plots


# -- architectures side by side -----------------------------------------------------------------------------

def plot_architectures(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    gpus = [g for g in dict.fromkeys(rows["gpu"]) if g]
    if len(gpus) < 2:
        return [Plot("architectures", "architectures side by side", skipped="rows from one GPU only")]
    plots = []
    for contract, part in _contract_groups(rows):
        title = f"{' vs '.join(gpus)} — {contract}: architectures side by side"
        ok = part[(part["status"] == "PASS") & part["tflops"].notna()]
        here = [g for g in gpus if (ok["gpu"] == g).any()]
        if len(here) < 2:
            plots.append(Plot("architectures", title, skipped="passing rows from one GPU only in this contract"))
            continue
        names = _impl_order(ok)
        colors, labels = _colors(part), _labels(part)
        has_peak = ok["pct_of_peak"].notna().any()
        nrows = 2 if has_peak else 1
        fig = Figure(figsize=(4.2 * len(here) + 2.5, 3.6 * nrows + 0.6))
        axs = fig.subplots(nrows, len(here), sharey="row", squeeze=False)
        for j, gpu in enumerate(here):
            sub = part[part["gpu"] == gpu]
            _draw_throughput(axs[0][j], sub, names, colors, labels)
            axs[0][j].set_title(gpu, fontsize=9)
            if j:
                axs[0][j].set_ylabel("")
            if has_peak:
                ax = axs[1][j]
                good = sub[(sub["status"] == "PASS") & sub["pct_of_peak"].notna()].copy()
                if len(good):
                    good["x"] = _size_xaxis(ax, good)
                for name in names:
                    pts = good[good["implementation"] == name].groupby("x", as_index=False)["pct_of_peak"].max()
                    if pts.empty:
                        continue
                    ax.plot(pts["x"], pts["pct_of_peak"],
                            **_style(name, bool(part.loc[part["implementation"] == name, "is_baseline"].any()),
                                     colors))
                ax.set_ylim(0, max(105.0, float(good["pct_of_peak"].max()) * 1.05 if len(good) else 0.0))
                ax.set_ylabel("% of datasheet peak" if j == 0 else "")
                ax.grid(True, alpha=0.3)
        handles, lbls = axs[0][0].get_legend_handles_labels()
        for j in range(1, len(here)):
            for h, l in zip(*axs[0][j].get_legend_handles_labels()):
                if l not in lbls:
                    handles.append(h)
                    lbls.append(l)
        fig.legend(handles, lbls, loc="upper left", bbox_to_anchor=(1.0, 0.93), fontsize=8, frameon=False,
                   title="implementation", title_fontsize=8)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        plots.append(Plot("architectures", title, save_figure(fig, out_dir, f"architectures_{contract}"),
                          caption="raw TFLOP/s on top, % of each GPU's own datasheet peak below; " + PASS_ONLY_NOTE))
    return plots


PLOT_KINDS: dict[str, Callable[[pd.DataFrame, Path], list[Plot]]] = {
    "throughput_vs_size": plot_throughput_vs_size,
    "percent_of_baseline": plot_percent_of_baseline,
    "roofline": plot_roofline,
    "error_vs_k": plot_error_vs_k,
    "heatmap": plot_sweep_heatmap,
    "architectures": plot_architectures,
}
assert tuple(PLOT_KINDS) == PLOT_NAMES, "report/kinds.py names every plot kind, in this order"


def make_plots(rows: pd.DataFrame, out_dir: Path, kinds: list[str] | None = None) -> list[Plot]:
    """Every requested plot kind (all by default) for normalised rows with a `gpu` column."""
    kinds = list(PLOT_KINDS) if kinds is None else kinds
    unknown = [k for k in kinds if k not in PLOT_KINDS]
    if unknown:
        raise ValueError(f"unknown plot kind(s) {unknown}; expected some of {list(PLOT_KINDS)}")
    plots: list[Plot] = []
    for kind in kinds:
        plots.extend(PLOT_KINDS[kind](rows, Path(out_dir)))
    return plots
