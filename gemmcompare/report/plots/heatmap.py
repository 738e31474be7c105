"""% of baseline over the two parameters that vary among a family's rows, one panel per problem (the
MAX_PROBLEMS largest). The colour scale is sequential and starts at 0, so 53% and 99% look different; every
cell carries its value. Panels share one scale unless one panel's values run far past the others' (an
unaligned shape), which then gets its own."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from .common import Plot, contract_groups, device, finite, problems_by_size, save_figure

MAX_PROBLEMS = 4
CMAP = "viridis"  # sequential, perceptually even, readable in grey


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


def scale_tops(panel_max: list[float]) -> list[float]:
    """The top of each panel's colour scale (bottom is 0): one shared top, unless a panel's max is more than
    twice the largest of the others, which then keeps its own."""
    tops = [max(110.0, m) for m in panel_max]  # past 100, so that the parity line on the scale shows
    out = []
    for i, t in enumerate(tops):
        rest = [x for j, x in enumerate(tops) if j != i]
        out.append(t if rest and t > 2 * max(rest) else None)
    shared = max([t for t, o in zip(tops, out) if o is None], default=110.0)
    return [o if o is not None else shared for o in out]


def _cells(sub: pd.DataFrame, xs: list, ys: list):
    """(the best % of baseline per cell, the text each cell shows: its value, or a non-PASS status)."""
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
    return grid, text


def _write_cells(ax, grid, text, cmap, norm) -> None:
    """Each cell's text, light on a dark cell and dark on a light one (by the cell colour's luminance)."""
    for i, row in enumerate(text):
        for j, label in enumerate(row):
            if not label:
                continue
            value = grid[i, j]
            if np.isfinite(value):
                r, g, b, _ = cmap(norm(value))
                color = "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else "black"
            else:
                color = "dimgrey"
            ax.text(j, i, label, ha="center", va="center", fontsize=8, color=color)


def plot_sweep_heatmap(rows: pd.DataFrame, out_dir: Path, max_problems: int = MAX_PROBLEMS) -> list[Plot]:
    plots = []
    cmap = matplotlib.colormaps[CMAP]
    for contract, part in contract_groups(rows):
        for family in dict.fromkeys(part["family"]):
            fam = part[(part["family"] == family) & ~part["is_baseline"]]
            axes_names = sweep_axes(fam)
            if len(axes_names) < 2:
                continue
            title = f"{device(part)} — {contract}: {family} sweep, % of baseline"
            if fam["pct_of_baseline"].notna().sum() == 0:
                plots.append(Plot("heatmap", title, skipped="no % of baseline (no baseline row)"))
                continue
            px, py = axes_names[1], axes_names[0]  # most values on the y axis (rows read easier than columns)
            others = axes_names[2:]
            fam = fam.copy()
            fam["_x"] = [_param_text((p or {}).get(px)) for p in fam["params"]]
            fam["_y"] = [_param_text((p or {}).get(py)) for p in fam["params"]]
            xs, ys = _sort_values(list(fam["_x"])), _sort_values(list(fam["_y"]))
            problems = problems_by_size(fam)
            omitted = problems[:-max_problems] if len(problems) > max_problems else []
            problems = problems[-max_problems:]
            panel_max = [float(finite(fam.loc[(fam["problem"] == p) & (fam["status"] == "PASS"),
                                               "pct_of_baseline"]).max(initial=0)) for p in problems]
            tops = scale_tops(panel_max)
            own = len(set(tops)) > 1
            fig = Figure(figsize=(min(22, 1.4 + len(problems) * (0.8 * len(xs) + (2.3 if own else 1.6))),
                                  0.5 * len(ys) + 2.4))
            axs = np.atleast_1d(fig.subplots(1, len(problems), squeeze=False)[0])
            for ax, problem, top in zip(axs, problems, tops):
                norm = Normalize(vmin=0, vmax=top)
                grid, text = _cells(fam[fam["problem"] == problem], xs, ys)
                image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto")
                _write_cells(ax, grid, text, cmap, norm)
                ax.set_xticks(range(len(xs)))
                ax.set_xticklabels(xs, fontsize=8, rotation=30 if max(map(len, xs)) > 8 else 0)
                ax.set_yticks(range(len(ys)))
                ax.set_yticklabels(ys if ax is axs[0] else [], fontsize=8)
                ax.set_xlabel(px)
                ax.set_title(problem, fontsize=9)
                if own or ax is axs[-1]:
                    cbar = fig.colorbar(image, ax=ax if own else list(axs), shrink=0.9, pad=0.03)
                    cbar.ax.axhline(100, color="red", linewidth=1.2)
                    cbar.set_label("% of baseline (red line: 100)", fontsize=8)
                    cbar.ax.tick_params(labelsize=7)
            axs[0].set_ylabel(py)
            fig.suptitle(title, fontsize=10)
            caption = "cells: % of the same-run baseline; colour from 0, the red line on the scale is parity (100); " \
                      "non-PASS cells show their status, empty cells were not in the sweep"
            if own:
                caption += "; a panel whose values run far past the others has its own scale"
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
