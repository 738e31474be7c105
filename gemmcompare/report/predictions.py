"""The predictions section of a report: the model's time beside the measured one, the bound that limits
it, occupancy and waves; rows far from their bound flagged; a roofline with the predicted points.

Rows carry their predictions (runner/predictions.py fills them while measuring; `gemmcompare analyze` makes
rows with predictions only). "% of bound" is predicted / measured x 100: a kernel at 40% of its bound runs
2.5 times slower than its structure allows on this device, and is where to look.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..files import write_csv
from .data import is_missing
from .labels import legend_labels
from .html import embed_png
from ..files import slug
from ..progress import SILENT, Progress
from .plots.common import save_figure
from .writers import html_table, markdown_table

FAR_FROM_BOUND_PCT = 50.0  # a row below half of its predicted rate is flagged

NOTE = ("Predicted: the time the kernel's structure allows on this device (gemmcompare.model: the math rate "
        "its instruction was measured to reach, its occupancy and tile quantization, HBM traffic, and the L1 "
        "data path of the lab kernels), in milliseconds. % of bound = predicted / measured x 100; rows below "
        f"{FAR_FROM_BOUND_PCT:g}% are flagged: the kernel loses more than half of what its structure allows. "
        "Bound: compute, memory (HBM), l1 (L1/shared data path), l2 (operand traffic) or waves (a partial "
        "last wave idles the busiest SM). Occupancy: CTAs per SM (resident warps / warp slots), limited by.")


@dataclass
class PredictionSection:
    table: pd.DataFrame  # full precision
    markdown: str
    html: str
    files: list[Path] = field(default_factory=list)


def prediction_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per row that has a prediction, full precision, sorted by contract, problem and name."""
    if rows is None or not len(rows) or "predicted_ms" not in rows:
        return pd.DataFrame()
    # a SKIP or BUILD_ERROR row never ran and never will: its prediction would describe nothing
    keep = [not is_missing(v) and s not in ("SKIP", "BUILD_ERROR") for v, s in zip(rows["predicted_ms"], rows["status"])]
    have = rows[keep]
    if not len(have):
        return pd.DataFrame()
    out = pd.DataFrame({
        "contract": have["contract"], "problem": have["problem"], "implementation": have["implementation"],
        "status": have["status"], "median_ms": have["median_ms"], "predicted_ms": have["predicted_ms"],
        "pct_of_bound": 100.0 * have["predicted_ms"] / have["median_ms"],
        "measured_over_predicted": have["median_ms"] / have["predicted_ms"],
        "predicted_bound": have["predicted_bound"], "tflops": have["tflops"],
        "predicted_tflops": have["predicted_tflops"], "occupancy_ctas_per_sm": have["occupancy_ctas_per_sm"],
        "occupancy": have["occupancy"], "occupancy_limited_by": have["occupancy_limited_by"],
        "wave_efficiency": have["wave_efficiency"],
        "registers": have["registers"], "smem_bytes": have["smem_bytes"],
    })
    out["nvidia_heuristics_ms"] = [((p or {}).get("nvidia_matmul_heuristics") or {}).get("runtime_ms")
                                   for p in have["prediction"]]
    out["far_from_bound"] = out["pct_of_bound"] < FAR_FROM_BOUND_PCT
    out["hbm_bytes"] = [(p or {}).get("hbm_bytes") for p in have["prediction"]]
    out["flops"] = have["flops"].values
    return out.sort_values(["contract", "problem", "implementation"], kind="stable").reset_index(drop=True)


def _f(v, fmt: str) -> str:
    return "" if is_missing(v) else format(v, fmt)


def display(table: pd.DataFrame) -> pd.DataFrame:
    shown = _display(table)
    if not any(shown["NVIDIA heuristics ms"]):  # the optional package absent, or no CUTLASS row: no column
        shown = shown.drop(columns=["NVIDIA heuristics ms"])
    return shown


def _display(table: pd.DataFrame) -> pd.DataFrame:
    names = legend_labels(list(table["implementation"]))
    occ = [("" if is_missing(c) else f"{int(c)} ({o:.0%}) {lim}".strip())
           for c, o, lim in zip(table["occupancy_ctas_per_sm"], table["occupancy"], table["occupancy_limited_by"])]
    return pd.DataFrame({
        "contract": table["contract"], "problem": table["problem"],
        "implementation": [names.get(n, n) for n in table["implementation"]],
        "measured ms": [_f(v, ".4f") for v in table["median_ms"]],
        "predicted ms": [_f(v, ".4f") for v in table["predicted_ms"]],
        "% of bound": [("" if is_missing(v) else f"{v:.1f}" + (" <- look here" if v < FAR_FROM_BOUND_PCT else ""))
                       for v in table["pct_of_bound"]],
        "bound": table["predicted_bound"],
        "pred. TFLOP/s": [_f(v, ".1f") for v in table["predicted_tflops"]],
        "CTAs/SM (occupancy) limited by": occ,
        "wave eff.": [_f(v, ".3f") for v in table["wave_efficiency"]],
        # NVIDIA's estimate, for CUTLASS rows when nvidia-matmul-heuristics is installed (blank otherwise)
        "NVIDIA heuristics ms": [_f(v, ".4f") for v in table.get("nvidia_heuristics_ms", [None] * len(table))],
    })


def _roofline(table: pd.DataFrame, rows: pd.DataFrame, out_dir: Path, contract: str) -> list[Path]:
    """Attainable TFLOP/s against FLOP per HBM byte: the device's roofs, each row's predicted point (open)
    and its measured one (filled) on the same intensity."""
    has_bytes = np.array([not is_missing(b) and bool(b) for b in table["hbm_bytes"]], dtype=bool)
    sub = table[(table["contract"] == contract).to_numpy() & has_bytes]
    if not len(sub):
        return []
    preds = [p for p, c in zip(rows["prediction"], rows["contract"])
             if c == contract and isinstance(p, dict) and p.get("peak_tflops")]
    if not preds:
        return []
    peak, bandwidth = preds[0]["peak_tflops"], preds[0]["bandwidth"]
    ceilings = {(p["ceiling"]["instruction"], p["rate_tflops"]) for p in preds if p["rate_tflops"] < peak}
    x = sub["flops"].astype(float) / sub["hbm_bytes"].astype(float)
    fig = Figure(figsize=(8, 5.5))
    ax = fig.add_subplot()
    lo, hi = max(min(x.min() / 4, 1.0), 1e-3), max(x.max() * 4, 2 * peak * 1e12 / bandwidth)
    grid = np.logspace(np.log10(lo), np.log10(hi), 200)
    ax.plot(grid, np.minimum(peak, bandwidth * grid / 1e12), color="black", linewidth=1.5,
            label=f"datasheet roof: {peak:g} TFLOP/s, {bandwidth / 1e12:g} TB/s")
    by_rate: dict[float, list[str]] = {}
    for instruction, rate in ceilings:
        by_rate.setdefault(rate, []).append(instruction)
    for rate, names in sorted(by_rate.items(), reverse=True):
        instruction = "/".join(sorted(names))
        ax.plot(grid, np.minimum(rate, bandwidth * grid / 1e12), linestyle=":", linewidth=1.2, color="gray")
        ax.annotate(f"{instruction} ceiling {rate:g}", (grid[-1], rate), ha="right", va="bottom", fontsize=7,
                    color="dimgray")
    names = legend_labels(list(sub["implementation"]))
    colors = matplotlib_colors(len(sub))
    for (i, r), xi, color in zip(sub.iterrows(), x, colors):
        label = names.get(r["implementation"], r["implementation"])
        ax.scatter([xi], [r["predicted_tflops"]], facecolors="none", edgecolors=[color], s=60, zorder=3,
                   label=f"{label} {r['problem']}")
        if not is_missing(r["tflops"]):
            ax.scatter([xi], [r["tflops"]], color=[color], s=30, zorder=4)
            ax.plot([xi, xi], [r["tflops"], r["predicted_tflops"]], color=color, linewidth=0.8, zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per HBM byte (model's HBM traffic)")
    ax.set_ylabel("TFLOP/s (logical 2·M·N·K)")
    ax.set_title(f"roofline, predicted (open) and measured (filled): {contract}", fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    if len(sub) <= 40:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_figure(fig, out_dir, f"roofline_predicted_{slug(contract)}")


def matplotlib_colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab20"] if n > 10 else colormaps["tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def predictions_section(rows: pd.DataFrame, out_dir: str | Path, heading: str = "##",
                        progress: Progress = SILENT) -> PredictionSection:
    """The section (Markdown and HTML), predictions.csv and one roofline per contract, written into out_dir.
    Rows without predictions give an empty section that says so. `progress` hears of each roofline (seconds
    each: most of `analyze`'s report)."""
    out = Path(out_dir)
    table = prediction_table(rows)
    if not len(table):
        text = "No row has a prediction (rows from before gemmcompare predicted, or kernels the model cannot describe)."
        return PredictionSection(table, f"{heading} Predictions\n\n{text}\n",
                                 f"<h2>Predictions</h2><p class='note'>{html.escape(text)}</p>")
    files = [write_csv(table, out / "predictions.csv")]
    plots = []
    contracts = list(dict.fromkeys(table["contract"]))
    with progress.items(len(contracts), "rooflines", unit="plot") as items:
        for contract in contracts:
            t0 = time.monotonic()
            plots.extend(_roofline(table, rows, out, contract))
            items.done(f"roofline of the predictions under {contract}", time.monotonic() - t0)
    files += plots
    shown = display(table)
    far = int(table["far_from_bound"].sum())
    md = [f"{heading} Predictions\n", NOTE + "\n",
          f"{far} of {len(table)} rows below {FAR_FROM_BOUND_PCT:g}% of their bound.\n" if table["median_ms"].notna().any()
          else "", markdown_table(shown) + "\n"]
    body = [f"<h2>Predictions</h2><p>{html.escape(NOTE)}</p>", html_table(shown)]
    for p in plots:
        if p.suffix == ".png":
            md.append(f"![{p.stem}]({p.name})\n")
            body.append(f"<figure>{embed_png(p)}<figcaption>{html.escape(p.stem)}</figcaption></figure>")
    return PredictionSection(table, "\n".join(m for m in md if m), "\n".join(body), files)


def predicted_vs_measured(rows: pd.DataFrame, device) -> pd.DataFrame:
    """Measured PASS rows (a results file's, predictions or not) predicted on `device` (a DeviceSpec or a
    name): problem, contract, implementation, measured and predicted ms, their ratio, the bound and the
    model's terms. Rows the model cannot describe are left out."""
    from ..model.predict import predict_row

    out = []
    for rec in rows.to_dict("records"):
        if str(rec.get("status")) != "PASS" or is_missing(rec.get("median_ms")) or rec.get("family") == "custom":
            continue
        try:
            p = predict_row(rec, device)
        except (KeyError, ValueError):
            continue
        out.append({"problem": rec["problem"], "contract": rec["contract"], "implementation": rec["implementation"],
                    "median_ms": float(rec["median_ms"]), "predicted_ms": p.predicted_ms,
                    "measured_over_predicted": float(rec["median_ms"]) / p.predicted_ms, "bound": p.bound,
                    "compute_ms": p.compute_ms, "memory_ms": p.memory_ms, "l1_ms": p.l1_ms,
                    "rate_tflops": p.rate_tflops, "wave_efficiency": p.wave_efficiency,
                    "ctas_per_sm": p.occupancy.ctas_per_sm if p.occupancy else None})
    return pd.DataFrame(out)
