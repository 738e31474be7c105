"""Report plots, one module per kind (matplotlib, each figure on its own Agg canvas; PNG and SVG).

Every plot has units on its axes, the device and the contract in its title, and draws the baseline distinctly
(black, dashed, square markers). A plot the data cannot support (one problem size, no baseline, no peaks for
the device) is skipped with a note saying why, never drawn empty.

  throughput      TFLOP/s by problem (size axis or categories), CI error bars     throughput_vs_size
  baseline        % of baseline bars with values and CI error bars                percent_of_baseline
  roofline        points under the ceilings, each problem named                    roofline
  bandwidth       % of the HBM roofline bars (with GB/s) of memory-bound problems  bandwidth
  errors          max abs error vs K against both references                      error_vs_k
  heatmap         % of baseline over a two-parameter sweep, sequential from 0     heatmap
  distribution    each row's samples (violins and dots) per problem               distribution
  architectures   several GPUs side by side                                        architectures
  energy          TFLOP/s against joules per GEMM, one point per row, CIs both ways  energy_vs_speed
  common          Plot, save_figure, colours, labels, legend or key table
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pandas as pd

from ...progress import SILENT, Progress
from ..kinds import PLOT_NAMES
from .architectures import plot_architectures
from .bandwidth import plot_bandwidth
from .baseline import plot_percent_of_baseline
from .common import Plot, save_figure  # noqa: F401  (compare and history save their figures with it)
from .distribution import plot_distribution
from .energy import plot_energy_vs_speed
from .errors import plot_error_vs_k
from .heatmap import plot_sweep_heatmap
from .roofline import ceilings, plot_roofline  # noqa: F401
from .throughput import plot_throughput_vs_size

PLOT_KINDS: dict[str, Callable[[pd.DataFrame, Path], list[Plot]]] = {
    "throughput_vs_size": plot_throughput_vs_size,
    "percent_of_baseline": plot_percent_of_baseline,
    "roofline": plot_roofline,
    "bandwidth": plot_bandwidth,
    "error_vs_k": plot_error_vs_k,
    "heatmap": plot_sweep_heatmap,
    "distribution": plot_distribution,
    "architectures": plot_architectures,
    "energy_vs_speed": plot_energy_vs_speed,
}
assert tuple(PLOT_KINDS) == PLOT_NAMES, "report/kinds.py names every plot kind, in this order"


def make_plots(rows: pd.DataFrame, out_dir: Path, kinds: list[str] | None = None,
               progress: Progress = SILENT) -> list[Plot]:
    """Every requested plot kind (all by default) for normalised rows with a `gpu` column; `progress` hears
    of each kind as it is drawn (a large run's heatmaps take seconds)."""
    kinds = list(PLOT_KINDS) if kinds is None else kinds
    unknown = [k for k in kinds if k not in PLOT_KINDS]
    if unknown:
        raise ValueError(f"unknown plot kind(s) {unknown}; expected some of {list(PLOT_KINDS)}")
    plots: list[Plot] = []
    with progress.items(len(kinds), "plots", unit="kind") as items:
        for kind in kinds:
            t0 = time.monotonic()
            made = PLOT_KINDS[kind](rows, Path(out_dir))
            plots.extend(made)
            drawn = sum(1 for p in made if not p.skipped)
            items.done(f"{kind}: {drawn} figure(s) drawn" + (f", {len(made) - drawn} skipped" if drawn < len(made)
                                                              else ""), time.monotonic() - t0)
    return plots
