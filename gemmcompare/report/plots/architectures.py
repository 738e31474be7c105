"""Several GPUs side by side: one column per GPU, TFLOP/s by problem on top and % of each GPU's own datasheet
peak below (the figure that compares across architectures)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from .common import CI_NOTE, PASS_ONLY_NOTE, Palette, Plot, contract_groups, legend, save_figure
from .throughput import draw_throughput


def plot_architectures(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    gpus = [g for g in dict.fromkeys(rows["gpu"]) if g]
    if len(gpus) < 2:
        return [Plot("architectures", "architectures side by side", skipped="rows from one GPU only")]
    plots = []
    for contract, part in contract_groups(rows):
        title = f"{' vs '.join(gpus)} — {contract}: architectures side by side"
        ok = part[(part["status"] == "PASS") & part["tflops"].notna()]
        here = [g for g in gpus if (ok["gpu"] == g).any()]
        if len(here) < 2:
            plots.append(Plot("architectures", title, skipped="passing rows from one GPU only in this contract"))
            continue
        palette = Palette(part)
        has_peak = ok["pct_of_peak"].notna().any()
        nrows = 2 if has_peak else 1
        fig = Figure(figsize=(4.4 * len(here) + 1.5, 3.8 * nrows + 0.6))
        axs = fig.subplots(nrows, len(here), squeeze=False)
        handles, labels = [], []
        for j, gpu in enumerate(here):
            sub = part[part["gpu"] == gpu]
            h, lab, _ = draw_throughput(axs[0][j], sub, palette)
            for hh, ll in zip(h, lab):
                if ll not in labels:
                    handles.append(hh)
                    labels.append(ll)
            axs[0][j].set_title(gpu, fontsize=9)
            if has_peak:
                draw_throughput(axs[1][j], sub, palette, column="pct_of_peak")
                axs[1][j].set_ylim(0, max(105.0, float(sub["pct_of_peak"].max()) * 1.05))
        fig.suptitle(title, fontsize=10)
        fig.subplots_adjust(hspace=0.55, wspace=0.3)
        legend(fig, axs[0][-1], handles, labels)
        plots.append(Plot("architectures", title, save_figure(fig, out_dir, f"architectures_{contract}"),
                          caption="raw TFLOP/s on top, % of each GPU's own datasheet peak below; "
                                  f"{CI_NOTE}; {PASS_ONLY_NOTE}"))
    return plots
