"""Speed against energy: per contract and GPU, one point per PASS row with an energy figure, TFLOP/s (logical
2·M·N·K / median time) up, joules per GEMM across (log: problems of different sizes differ by their FLOPs), both
with their 95% CIs; the baseline black squares, each point named by its problem. Up and to the left is better; at
a power cap two kernels of one speed can sit at different energies (docs/timing.md, "Energy")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..stats import rate_ci
from .common import PASS_ONLY_NOTE, Palette, Plot, contract_groups, impl_order, legend, passing, save_figure

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


def _draw(sub: pd.DataFrame, ok: pd.DataFrame, title: str, out_dir: Path, stem: str) -> Plot:
    palette = Palette(sub)
    fig = Figure(figsize=(8.5, 5.0))
    ax = fig.add_subplot()
    handles, labels = [], []
    for name in impl_order(ok):
        r = ok[ok["implementation"] == name]
        x = r["energy_j_per_gemm"].to_numpy(dtype=float)
        y = r["tflops"].to_numpy(dtype=float)
        rel = pd.to_numeric(r["energy_ci_rel"], errors="coerce").to_numpy(dtype=float)
        xerr = np.where(np.isfinite(rel), rel * x, 0.0)
        ci = [rate_ci(f, s) for f, s in zip(r["flops"], r["samples_ms"])]
        yerr = np.vstack([[max(v - c[0], 0) if c else 0 for c, v in zip(ci, y)],
                          [max(c[1] - v, 0) if c else 0 for c, v in zip(ci, y)]])
        handles.append(ax.errorbar(x, y, xerr=xerr, yerr=yerr, capsize=2.5, elinewidth=1,
                                   **palette.style(name, line=False)))
        labels.append(palette.text(name))
        for xi, yi, problem in zip(x, y, r["problem"]):
            ax.annotate(problem, (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=6.5, color="#555555")
    ax.set_xscale("log")
    ax.set_xlabel("joules per GEMM (log scale)")
    ax.set_ylabel("TFLOP/s (logical 2·M·N·K / median time)")
    ax.set_ylim(bottom=0, top=float(ok["tflops"].max()) * 1.15)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title, fontsize=10)
    legend(fig, ax, handles, labels)
    sources = sorted(set(ok["energy_source"].dropna()) - {""}) if "energy_source" in ok else []
    caption = f"{CAPTION}; energy source: {', '.join(sources) or 'unknown'}; {PASS_ONLY_NOTE}"
    return Plot("energy_vs_speed", title, save_figure(fig, out_dir, stem), caption=caption)
