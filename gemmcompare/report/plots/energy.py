"""Speed against energy: per contract and GPU, a panel per problem, one point per PASS row with an energy figure,
TFLOP/s (logical 2·M·N·K / median time) up, joules per GEMM across, both with their 95% CIs; the baseline black
squares. Up and to the left is better; at
a power cap two kernels of one speed can sit at different energies (docs/timing.md, "Energy")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..stats import rate_ci
from .common import (PASS_ONLY_NOTE, Palette, Plot, contract_groups, impl_order, legend, passing, save_figure,
                     sorted_problems)

CAPTION = ("x: joules per GEMM, median over energy batches of back-to-back launches read by NVML's energy counter "
           "(or its power samples where the row says so), bars its 95% CI; y: TFLOP/s from the median time, bars its "
           "95% CI; the baseline is drawn as black squares")


def _energy_rows(part: pd.DataFrame) -> pd.DataFrame:
    ok = passing(part, "tflops")
    energy = pd.to_numeric(ok["energy_j_per_gemm"], errors="coerce") if "energy_j_per_gemm" in ok else None
    return ok[(energy > 0).fillna(False)] if energy is not None else ok.iloc[0:0]


def plot_energy_vs_speed(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        for gpu in dict.fromkeys(part["gpu"]):
            sub = part[part["gpu"] == gpu]
            title = f"{gpu} — {contract}: speed against energy per GEMM"
            ok = _energy_rows(sub)
            if ok.empty:
                plots.append(Plot("energy_vs_speed", title, skipped="no PASS row with an energy figure (rows from "
                                                                    "before energy was measured, or no NVML)"))
                continue
            plots.append(_draw(sub, ok, title, out_dir, f"energy_vs_speed_{contract}_{gpu}"))
    return plots


MAX_COLUMNS = 4  # panels per row of the figure


def _draw(sub: pd.DataFrame, ok: pd.DataFrame, title: str, out_dir: Path, stem: str) -> Plot:
    """One panel per problem: rows of one problem differ by a few percent in both directions, which a shared
    axis over problems of different sizes (a factor of 8 in FLOPs per step) would flatten into one dot."""
    palette = Palette(sub)
    problems = sorted_problems(ok["problem"])
    columns = min(MAX_COLUMNS, len(problems))
    fig_rows = -(-len(problems) // columns)
    fig = Figure(figsize=(3.6 * columns + 3.2, 3.3 * fig_rows + 0.6))
    axes = fig.subplots(fig_rows, columns, squeeze=False).ravel()
    handles: dict[str, object] = {}
    for ax, problem in zip(axes, problems):
        here = ok[ok["problem"] == problem]
        for name in impl_order(here):
            r = here[here["implementation"] == name]
            x = r["energy_j_per_gemm"].to_numpy(dtype=float)
            y = r["tflops"].to_numpy(dtype=float)
            rel = pd.to_numeric(r["energy_ci_rel"], errors="coerce").to_numpy(dtype=float)
            xerr = np.where(np.isfinite(rel), rel * x, 0.0)
            ci = [rate_ci(f, s) for f, s in zip(r["flops"], r["samples_ms"])]
            yerr = np.vstack([[max(v - c[0], 0) if c else 0 for c, v in zip(ci, y)],
                              [max(c[1] - v, 0) if c else 0 for c, v in zip(ci, y)]])
            handles.setdefault(name, ax.errorbar(x, y, xerr=xerr, yerr=yerr, capsize=2.5, elinewidth=1,
                                                 **palette.style(name, line=False)))
        ax.margins(0.12)  # autoscaled to the points and their bars, not from 0: a few percent must show
        ax.set_title(problem, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7.5)
    for ax in axes[len(problems):]:
        ax.set_visible(False)
    for ax in axes.reshape(fig_rows, columns)[:, 0]:
        ax.set_ylabel("TFLOP/s (median time)", fontsize=8.5)
    for ax in axes[:len(problems)]:
        ax.set_xlabel("joules per GEMM", fontsize=8.5)
    fig.suptitle(title, fontsize=10)
    legend(fig, axes[columns - 1], list(handles.values()), [palette.text(n) for n in handles])
    sources = sorted(set(ok["energy_source"].dropna()) - {""}) if "energy_source" in ok else []
    caption = (f"{CAPTION}; one panel per problem, each with axes fitted to its rows (not from 0); energy source: "
               f"{', '.join(sources) or 'unknown'}; {PASS_ONLY_NOTE}")
    return Plot("energy_vs_speed", title, save_figure(fig, out_dir, stem), caption=caption)

