"""% of the same-run baseline, as bars with their values written on them and 95% CI error bars (the row's and
the baseline's median intervals combined). Up to GROUPED_MAX implementations: bars grouped by problem with a
legend, wrapped into rows of groups on one y scale when one row would make a bar too narrow for its number (as
the bandwidth plot); more: one panel per problem with the implementations named on the axis, coloured by kind.

A few bars far above the rest (an unaligned shape where the baseline leaves its fast path) would flatten
every other bar: they are cut at the top of the axis, hatched, and carry their value."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..data import KINDS
from ..labels import legend_labels, wrap
from ..stats import percent_ci
from .common import (BASELINE_STYLE, KIND_COLORS, PASS_ONLY_NOTE, WIDTH_MAX_IN, Palette, Plot, contract_groups, device,
                     impl_order, kind_of, legend, panel_axes, passing, problem_row_axes, problem_rows,
                     problems_by_size, save_figure)

GROUPED_MAX = 10
PANEL_COLUMNS = 3
CI_NOTE = "error bars: 95% CI (row and baseline medians, from the raw samples)"
Y_LABEL = "% of baseline (baseline time / time × 100)"


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"


def axis_top(values) -> tuple[float, float | None]:
    """(top of the axis, cut level or None). Bars above max(150, 2 x the median) are cut when they are at most a
    third of the bars; otherwise the axis holds every bar."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if not len(v):
        return 110.0, None
    limit = max(150.0, 2 * float(np.median(v)))
    over = v > limit
    if 0 < over.sum() <= len(v) / 3:
        top = max(120.0, 1.15 * float(v[~over].max()))
        return top, top * 0.94
    return max(110.0, 1.12 * float(v.max())), None


def _with_ci(part: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """part (PASS, non-baseline rows) with ci_lo/ci_hi of their % of baseline."""
    base = rows[rows["is_baseline"] & (rows["status"] == "PASS")].drop_duplicates(["gpu", "problem"], keep="last")
    base_samples = {(g, p): s for g, p, s in zip(base["gpu"], base["problem"], base["samples_ms"])}
    out = part.copy()
    cis = [percent_ci(v, s, base_samples.get((g, p))) for v, s, g, p in
           zip(out["pct_of_baseline"], out["samples_ms"], out["gpu"], out["problem"])]
    out["ci_lo"] = [c[0] if c else np.nan for c in cis]
    out["ci_hi"] = [c[1] if c else np.nan for c in cis]
    return out


def _bars(ax, xs, vals, lo, hi, width, cut, color, label=None, horizontal=False, value_font=7, rotate=False,
          texts=None, **bar_style):
    """Bars (cut at `cut` where higher, hatched), CI whiskers, and each bar's value (or `texts`, one a bar)."""
    shown = [min(v, cut) if cut else v for v in vals]
    bar = ax.barh if horizontal else ax.bar
    bars = bar(xs, shown, width, color=color, label=label, **bar_style)
    texts = [_fmt(v) for v in vals] if texts is None else texts  # a cut bar is hatched; its number is its real value
    for b, v, l, h, text in zip(bars, vals, lo, hi, texts):
        clipped = cut is not None and v > cut
        if clipped:
            b.set_hatch("///")
            b.set_edgecolor("white")
        elif np.isfinite(l) and np.isfinite(h):
            centre = b.get_y() + b.get_height() / 2 if horizontal else b.get_x() + b.get_width() / 2
            if horizontal:
                ax.errorbar([v], [centre], xerr=[[v - l], [h - v]], fmt="none", ecolor="black", elinewidth=0.8,
                            capsize=1.5)
            else:
                ax.errorbar([centre], [v], yerr=[[v - l], [h - v]], fmt="none", ecolor="black", elinewidth=0.8,
                            capsize=1.5)
        end = max(h, v) if np.isfinite(h) and not clipped else min(v, cut) if cut else v
        if horizontal:
            ax.annotate(text, (end, b.get_y() + b.get_height() / 2), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=value_font, zorder=5,
                        bbox=dict(boxstyle="square,pad=0.05", fc="white", ec="none", alpha=0.8))
        else:
            ax.annotate(text, (b.get_x() + b.get_width() / 2, end), xytext=(0, 2.5), textcoords="offset points",
                        ha="center", va="bottom", fontsize=value_font, rotation=90 if rotate else 0)
    return bars


STATUS_NOTE = "a slot without a bar names the row's status (SKIP, FAIL, ...)"


def _statuses(part: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(problem, implementation) -> status of the rows that have no bar (not PASS, or no % of baseline)."""
    rows = part[~part["is_baseline"] & (part["status"] != "PASS")]
    return {(p, i): s for p, i, s in zip(rows["problem"], rows["implementation"], rows["status"])}


def _status_mark(ax, at: tuple[float, float], status: str, horizontal: bool) -> None:
    """The status of a row that has no bar, written where its bar would start."""
    ax.annotate(status, at, xytext=(3, 0) if horizontal else (0, 3), textcoords="offset points", fontsize=6,
                color="dimgray", style="italic", va="center" if horizontal else "bottom",
                ha="left" if horizontal else "center", rotation=0 if horizontal else 90)


def _grouped(part: pd.DataFrame, ok: pd.DataFrame, title: str, out_dir: Path, contract: str) -> Plot:
    """Bars grouped by problem in one row; many problems (an LLM study's 45 shapes) wrap into rows of groups
    on one y scale, as the bandwidth plot does, so that a bar stays wide enough for its number."""
    palette = Palette(part)
    problems = problems_by_size(ok)
    names = impl_order(ok)
    slots = len(problems) * len(names)
    one_row = (min(WIDTH_MAX_IN, max(7.5, 0.33 * slots + 0.6 * len(problems) + 2)), 4.8)
    fig, axes_rows, per_row = problem_rows(problems, len(names), one_row=one_row)
    width = 0.8 / len(names)
    top, cut = axis_top(ok["pct_of_baseline"])
    bar_in = fig.get_figwidth() * 0.75 / per_row * 0.8 / len(names)
    chars = max(len(_fmt(v)) for v in ok["pct_of_baseline"])
    rotate = bar_in < 0.062 * chars + 0.03  # a value written across its bar: about 0.06 in per character at 7 pt
    handles: dict[str, object] = {}
    status_of = _statuses(part)
    for ax, chunk in axes_rows:
        for j, name in enumerate(names):
            rows = [ok[(ok["problem"] == p) & (ok["implementation"] == name)] for p in chunk]
            vals = [float(r["pct_of_baseline"].iloc[0]) if len(r) else np.nan for r in rows]
            lo = [float(r["ci_lo"].iloc[0]) if len(r) else np.nan for r in rows]
            hi = [float(r["ci_hi"].iloc[0]) if len(r) else np.nan for r in rows]
            xs = np.arange(len(chunk)) + (j - (len(names) - 1) / 2) * width
            keep = [i for i, v in enumerate(vals) if np.isfinite(v)]
            bars = _bars(ax, xs[keep], [vals[i] for i in keep], [lo[i] for i in keep], [hi[i] for i in keep],
                         width * 0.92, cut, palette.color.get(name, "grey"), value_font=6.5 if rotate else 7,
                         rotate=rotate)
            if len(bars):  # the legend takes its colour from a bar: the first row may have none of this one's
                handles.setdefault(name, bars)
            for i, p in enumerate(chunk):
                if not np.isfinite(vals[i]) and (p, name) in status_of:
                    _status_mark(ax, (xs[i], 0), status_of[(p, name)], horizontal=False)
        line = ax.axhline(100, **{k: v for k, v in BASELINE_STYLE.items() if k not in ("marker", "markersize")})
        if len(axes_rows) == 1:
            ax.set_ylabel(Y_LABEL)
        ax.set_ylim(0, top * (1.08 if rotate else 1.0))
        ax.grid(True, axis="y", alpha=0.3)
    problem_row_axes(axes_rows, per_row)
    if len(axes_rows) > 1:  # one label down the rows: each row is too short for it
        fig.supylabel(Y_LABEL, x=fig.subplotpars.left - 0.45 / fig.get_figwidth(), ha="right",
                     fontsize=10)
    baseline = next(iter(dict.fromkeys(part.loc[part["is_baseline"], "implementation"])), "baseline")
    first = axes_rows[0][0]
    first.set_title(title, fontsize=10)
    drawn = [n for n in names if n in handles]
    legend(fig, first, [line] + [handles[n] for n in drawn],
           [f"{legend_labels([baseline])[baseline]} (baseline) = 100%"] + [palette.text(n) for n in drawn])
    caption = f"same-run baseline, same contract and problem; {CI_NOTE}; {PASS_ONLY_NOTE}; {STATUS_NOTE}"
    if cut:
        caption += "; hatched bars go past the top of the axis: the number above each is its value"
    return Plot("percent_of_baseline", title, save_figure(fig, out_dir, f"pct_of_baseline_{contract}"), caption=caption)


def _panels(part: pd.DataFrame, ok: pd.DataFrame, title: str, out_dir: Path, contract: str) -> Plot:
    """One panel per problem (PANEL_COLUMNS to a row), implementations named on the y axis (best overall at
    the top), bars coloured by kind."""
    problems = problems_by_size(ok)
    mean = ok.groupby("implementation")["pct_of_baseline"].apply(lambda s: float(np.exp(np.log(s).mean())))
    names = list(mean.sort_values().index)  # barh draws from the bottom: best last = on top
    labels = {n: wrap(t) for n, t in legend_labels(names).items()}
    label_in = 0.062 * max(len(line) for t in labels.values() for line in t.split("\n")) + 0.3
    ncols = min(PANEL_COLUMNS, len(problems))
    nrows = math.ceil(len(problems) / ncols)
    panel_in, row_in = 2.8, max(0.22, 0.14 * max(t.count("\n") + 1 for t in labels.values()) + 0.06)
    width = label_in + ncols * panel_in + 1.5
    height = nrows * (row_in * len(names) + 1.1) + 0.5
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
    colors = {n: KIND_COLORS.get(kind_of(ok.loc[ok["implementation"] == n, "family"].iloc[0]), "grey") for n in names}
    baseline_line = {k: v for k, v in BASELINE_STYLE.items() if k not in ("marker", "markersize")}
    status_of = _statuses(part)
    for idx, ax, problem in panel_axes(axes, problems):
        sub = ok[ok["problem"] == problem].set_index("implementation")
        ys = [i for i, n in enumerate(names) if n in sub.index]
        vals = [float(sub.loc[names[i], "pct_of_baseline"]) for i in ys]
        lo = [float(sub.loc[names[i], "ci_lo"]) for i in ys]
        hi = [float(sub.loc[names[i], "ci_hi"]) for i in ys]
        _bars(ax, ys, vals, lo, hi, 0.75, None, [colors[names[i]] for i in ys], horizontal=True, value_font=6.5)
        for i, name in enumerate(names):
            if name not in sub.index and (problem, name) in status_of:
                _status_mark(ax, (0, i), status_of[(problem, name)], horizontal=True)
        ax.axvline(100, **baseline_line)
        ax.set_xlim(0, max(115.0, 1.2 * max(vals)) if vals else 115.0)
        ax.set_title(problem, fontsize=9)
        ax.set_xlabel("% of baseline", fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7)
    for r in range(nrows):
        axes[r][0].set_yticks(range(len(names)))
        axes[r][0].set_yticklabels([labels[n] for n in names], fontsize=7)
        axes[r][0].set_ylim(-0.6, len(names) - 0.4)
    kinds = [k for k in KINDS if any(kind_of(f) == k for f in ok["family"])]
    handles = [Patch(color=KIND_COLORS[k], label=k) for k in kinds]
    handles.append(axes[0][0].plot([], [], **baseline_line, label="baseline = 100%")[0])
    fig.legend(handles=handles, loc="upper right", bbox_to_anchor=(1.0, 1 - 0.5 / height), fontsize=8, frameon=False,
               title="kind", title_fontsize=8)
    fig.subplots_adjust(left=label_in / width, right=1 - 1.4 / width, top=1 - 0.75 / height, bottom=0.55 / height,
                        wspace=0.12, hspace=0.8 / (row_in * len(names) + 0.3))
    fig.suptitle(title, fontsize=10)
    caption = (f"implementations ordered by their geometric mean over the problems, best at the top; {CI_NOTE}; "
               f"{PASS_ONLY_NOTE}; {STATUS_NOTE}")
    return Plot("percent_of_baseline", title, save_figure(fig, out_dir, f"pct_of_baseline_{contract}"), caption=caption)


def plot_percent_of_baseline(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        title = f"{device(part)} — {contract}: % of baseline by problem"
        ok = passing(part, "pct_of_baseline")
        ok = ok[~ok["is_baseline"]]
        if ok.empty:
            why = "no baseline in this run" if not part["is_baseline"].any() else "no passing non-baseline row"
            plots.append(Plot("percent_of_baseline", title, skipped=why))
            continue
        if part["gpu"].nunique() > 1:
            plots.append(Plot("percent_of_baseline", title, skipped="rows from several GPUs: see the architectures plot"))
            continue
        ok = _with_ci(ok, part)
        draw = _grouped if ok["implementation"].nunique() <= GROUPED_MAX else _panels
        plots.append(draw(part, ok, title, out_dir, contract))
    return plots
