"""Max abs error against K, one panel per reference (rounded-input: judges; original-input: reported), on
the fixture every row checked when there is one. FAIL rows are marked with a red x."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from .common import Palette, Plot, contract_groups, device, impl_order, legend, pow2_axis, save_figure, size_axis

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
    for contract, part in contract_groups(rows):
        title = f"{device(part)} — {contract}: max abs error vs K"
        has = part[part["max_abs_err"].notna() | part["max_abs_err_orig"].notna()]
        if has.empty:
            plots.append(Plot("error_vs_k", title, skipped="no error figures in the rows"))
            continue
        if has["k"].nunique() < 2:
            plots.append(Plot("error_vs_k", title, skipped="one K only"))
            continue
        names = impl_order(has)
        palette = Palette(part)
        # A FAIL row stops at its first failing fixture, so row-level maxima cover different fixtures;
        # where every row checked one fixture in common, plot that fixture's errors for everyone.
        has, fixture = _on_common_fixture(has)
        joined = size_axis(has) is not None  # lines only through one family of shapes (K alone, or squares)
        fig = Figure(figsize=(11, 4.6))
        axes = fig.subplots(1, 2, sharey=True)
        zeros = 0
        handles: dict[str, object] = {}
        for ax, (col, subtitle) in zip(axes, ERROR_PANELS):
            for name in names:
                pts = has[has["implementation"] == name].groupby("k", as_index=False)[col].max().sort_values("k")
                zeros += int((pts[col] == 0).sum())
                pts = pts[pts[col] > 0]
                if pts.empty:
                    continue
                failed = set(has[(has["implementation"] == name) & (has["status"] == "FAIL")]["k"])
                (handle,) = ax.plot(pts["k"], pts[col], **palette.style(name, line=joined))
                handles.setdefault(name, handle)
                bad = pts[pts["k"].isin(failed)]
                if len(bad):
                    ax.plot(bad["k"], bad[col], linestyle="none", marker="x", color="red", markersize=9, zorder=6)
            pow2_axis(ax, has["k"], length_in=fig.get_figwidth() * 0.36)
            ax.set_yscale("log")
            ax.set_xlabel("K (reduction length)")
            ax.set_title(subtitle, fontsize=9)
            ax.grid(True, which="both", alpha=0.25)
        axes[0].set_ylabel(f"max |C − R| ({fixture} fixture)" if fixture else "max |C − R| over every fixture")
        fig.suptitle(title, fontsize=10)
        fig.subplots_adjust(wspace=0.06)
        legend(fig, axes[1], list(handles.values()), [palette.text(n) for n in handles])
        caption = "max over problems with the same K; a red x marks a FAIL row"
        if not joined:
            caption += "; the problems differ in more than K, so no lines join them"
        if zeros:
            caption += f"; {zeros} exact (zero-error) points cannot be drawn on a log axis and are left out"
        plots.append(Plot("error_vs_k", title, save_figure(fig, out_dir, f"error_vs_k_{contract}"), caption=caption))
    return plots
