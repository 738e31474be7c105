"""Achieved HBM bandwidth on the memory-bound problems: per contract and GPU, every PASS row's unique bytes /
median time as % of the HBM roofline, as grouped bars (one group per problem, ordered as percent_of_baseline
orders them), each bar carrying its GB/s, with 95% CI error bars and a dashed line at 100% (the device's HBM
bandwidth). The roofline labels these figures only while they fit; this plot always has every row's.

Many problems (an LLM study has 30 memory-bound shapes) wrap into rows of groups, so that a bar stays wide
enough for its number to be read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ... import peaks as _peaks
from ..bandwidth import memory_rates
from ..stats import rate_ci
from .baseline import STATUS_NOTE, _bars, _status_mark
from .common import AXES_SHARE, GROUP_FILL, PASS_ONLY_NOTE, Palette, Plot, contract_groups, impl_order, legend, \
    passing, problem_row_axes, problem_rows, problems_by_size, save_figure

ROOF_STYLE = dict(color="#c62828", linestyle="--", linewidth=1.6, zorder=1.5)  # red, not black: black is the baseline;
# over the bars, under their numbers
BASELINE_BAR = dict(edgecolor="black", linestyle="--", linewidth=1.1)  # white with a dashed black edge
CI_NOTE = "error bars: 95% CI of the median time from the raw samples"
BOUND_NOTE = ("memory-bound problems only: the plain roofline puts them on the memory roof (unique bytes at the HBM "
              "bandwidth take longer than their FLOPs at the datasheet peak)")


def _with_ci(ok: pd.DataFrame) -> pd.DataFrame:
    """ok (PASS rows joined with memory_rates) with ci_lo/ci_hi of their % of the HBM roofline: the CI of
    unique bytes / time, scaled as the row's own rate is."""
    out = ok.copy()
    cis = [rate_ci(b, s, unit=1e9) for b, s in zip(out["unique_bytes"], out["samples_ms"])]  # GB/s
    scale = out["pct_of_hbm_roofline"] / out["achieved_gbs"]  # GB/s -> % of the row's roofline
    out["ci_lo"] = [c[0] * f if c else np.nan for c, f in zip(cis, scale)]
    out["ci_hi"] = [c[1] * f if c else np.nan for c, f in zip(cis, scale)]
    return out


def _statuses(part: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(problem, implementation) -> status of a row with no bar (not PASS), the baseline's too."""
    rows = part[part["status"] != "PASS"]
    return {(p, i): s for p, i, s in zip(rows["problem"], rows["implementation"], rows["status"])}


def _draw(sub: pd.DataFrame, ok: pd.DataFrame, bandwidth: float, title: str, out_dir: Path, stem: str) -> Plot:
    palette = Palette(sub)
    problems = problems_by_size(ok)
    names = impl_order(ok)
    fig, axes_rows, per_row = problem_rows(problems, len(names))
    width = GROUP_FILL / len(names)
    bar_in = fig.get_figwidth() * AXES_SHARE / per_row * width
    chars = max(len(f"{v:.0f}") for v in ok["achieved_gbs"])
    rotate = bar_in < 0.062 * chars + 0.03  # as percent_of_baseline: a number written across its bar
    top = max(110.0, 1.12 * float(np.nanmax(np.fmax(ok["ci_hi"], ok["pct_of_hbm_roofline"])))) * (1.12 if rotate else 1)
    status_of = _statuses(sub[sub["problem"].isin(problems)])
    handles: dict[str, object] = {}
    for ax, chunk in axes_rows:
        for j, name in enumerate(names):
            got = [ok[(ok["problem"] == p) & (ok["implementation"] == name)] for p in chunk]
            xs = np.arange(len(chunk)) + (j - (len(names) - 1) / 2) * width
            keep = [i for i, r in enumerate(got) if len(r)]
            if keep:
                r = pd.concat([got[i] for i in keep])
                baseline = name in palette.baselines
                handles[name] = _bars(
                    ax, xs[keep], list(r["pct_of_hbm_roofline"]), list(r["ci_lo"]), list(r["ci_hi"]), width * 0.92,
                    None, "white" if baseline else palette.color.get(name, "grey"), value_font=6.5 if rotate else 7,
                    rotate=rotate, texts=[f"{v:.0f}" for v in r["achieved_gbs"]], **(BASELINE_BAR if baseline else {}))
            for i, p in enumerate(chunk):
                if i not in keep and (p, name) in status_of:
                    _status_mark(ax, (xs[i], 0), status_of[(p, name)], horizontal=False)
        roof = ax.axhline(100, **ROOF_STYLE)
        ax.set_ylabel("% of HBM roofline")
        ax.set_ylim(0, top)
        ax.grid(True, axis="y", alpha=0.3)
    problem_row_axes(axes_rows, per_row)
    first = axes_rows[0][0]
    first.set_title(title, fontsize=10)
    legend(fig, first, [roof] + [handles[n] for n in names if n in handles],
           [f"HBM roofline: {bandwidth / 1e9:.0f} GB/s = 100%"] + [palette.text(n) for n in names if n in handles])
    caption = (f"{BOUND_NOTE}; bar: achieved bandwidth (unique bytes / median time) as % of the HBM roofline; number on "
               f"each bar: its GB/s; {CI_NOTE}; {PASS_ONLY_NOTE}; {STATUS_NOTE}")
    return Plot("bandwidth", title, save_figure(fig, out_dir, stem), caption=caption)


def plot_bandwidth(rows: pd.DataFrame, out_dir: Path) -> list[Plot]:
    plots = []
    for contract, part in contract_groups(rows):
        for gpu in dict.fromkeys(part["gpu"]):
            sub = part[part["gpu"] == gpu]
            title = f"{gpu} — {contract}: achieved HBM bandwidth, memory-bound problems"
            bandwidth = _peaks.bandwidth_for(gpu)
            if bandwidth is None:
                plots.append(Plot("bandwidth", title, skipped=f"no HBM bandwidth for '{gpu}' in gemmcompare/peaks.py"))
                continue
            rates = sub.join(memory_rates(sub))
            if not rates["memory_bound"].any():
                plots.append(Plot("bandwidth", title, skipped="no memory-bound problem: each is compute-bound on this "
                                                               "GPU, or has no unique bytes or peak"))
                continue
            ok = passing(rates, "pct_of_hbm_roofline")
            ok = ok[ok["memory_bound"]]
            if ok.empty:
                plots.append(Plot("bandwidth", title, skipped="no PASS row with a time on a memory-bound problem"))
                continue
            plots.append(_draw(sub, _with_ci(ok), bandwidth, title, out_dir, f"bandwidth_{contract}_{gpu}"))
    return plots
