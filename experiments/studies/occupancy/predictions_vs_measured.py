"""Predicted vs measured over committed H200 receipts: the table behind docs/predictions.md.

    python3 experiments/studies/occupancy/predictions_vs_measured.py [OUT_DIR]

Reads experiments/studies/cutlass-sm90/h200/sweep and lab-ladder (rows with ptxas registers and shared
memory), predicts every PASS row on the model's H200 and writes table.csv.xz (every shape, full precision)
and summary.md (the 4096^3 rows, the fractions within 25% and 10%). No GPU: the measurements are committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[3]  # the repository (this file: experiments/studies/occupancy/)
sys.path.insert(0, str(ROOT))

from gemmcompare.model.devices import DEVICES  # noqa: E402
from gemmcompare.results import concat_rows  # noqa: E402
from gemmcompare.report.predictions import predicted_vs_measured  # noqa: E402
from gemmcompare.report.writers import markdown_table  # noqa: E402
from gemmcompare.store.run_folder import load_result_file  # noqa: E402

SOURCES = {"cutlass-sm90-sweep": "cutlass-sm90/h200/sweep", "lab-ladder": "lab-ladder/h200"}  # name: receipt
SQUARE = "4096x4096x4096"


def table() -> pd.DataFrame:
    frames = []
    for name, receipt in SOURCES.items():
        _, rows = load_result_file(ROOT / "experiments" / "studies" / receipt)
        t = predicted_vs_measured(rows, DEVICES["h200_sxm"])
        t.insert(0, "source", name)
        frames.append(t)
    return concat_rows(frames)


def within(t: pd.DataFrame, tolerance: float) -> float:
    """Share of rows whose predicted time is within `tolerance` of the measured one (|pred/meas - 1|)."""
    return float(((t["predicted_ms"] / t["median_ms"] - 1).abs() <= tolerance).mean())


def main(out_dir: str | None = None) -> int:
    out = Path(out_dir) if out_dir else ROOT / "experiments" / "results" / "analysis" / "predicted-vs-measured-h200"
    out.mkdir(parents=True, exist_ok=True)
    t = table()
    t.to_csv(out / "table.csv.xz", index=False, float_format="%.17g")  # compressed: receipts hold data compactly
    sq = t[t["problem"] == SQUARE]
    shown = pd.DataFrame({
        "source": sq["source"], "contract": sq["contract"],
        "implementation": [n if len(n) <= 70 else n[:67] + "..." for n in sq["implementation"]],
        "measured ms": sq["median_ms"].map(lambda v: f"{v:.4f}"),
        "predicted ms": sq["predicted_ms"].map(lambda v: f"{v:.4f}"),
        "measured / predicted": sq["measured_over_predicted"].map(lambda v: f"{v:.3f}"),
        "bound": sq["bound"],
    })
    lines = [f"# Predicted vs measured, H200, {SQUARE}\n",
             f"`python3 experiments/studies/occupancy/predictions_vs_measured.py` over {', '.join(SOURCES)} "
             f"(experiments/studies); every shape in table.csv.xz.\n",
             f"{len(sq)} rows at {SQUARE}: **{within(sq, 0.25):.1%} within 25%**, **{within(sq, 0.10):.1%} within "
             f"10%** of the measured time. All {len(t)} rows (every shape): {within(t, 0.25):.1%} within 25%, "
             f"{within(t, 0.10):.1%} within 10%.\n", markdown_table(shown) + "\n"]
    (out / "summary.md").write_text("\n".join(lines))
    print(lines[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
