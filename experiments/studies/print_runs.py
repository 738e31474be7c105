"""What a device call prints last: per run folder its row counts, then per problem cuBLAS's time and each other
row's status, % of cuBLAS and what ran (a tuned row's pick, a torch.compile row's inductor kernel).
    python3 experiments/studies/print_runs.py RUN_FOLDER [RUN_FOLDER...]   (folders with a results.csv)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd


def what_ran(notes: str) -> str:
    pick = re.search(r"tuned: (\S+)", notes)
    ran = re.search(r"inductor's code runs ([^;]+)", notes)
    return pick.group(1).split(".", 1)[-1][-58:] if pick else ran.group(1)[:58] if ran else ""


def main(folders: list[str]) -> None:
    for folder in folders:
        if not Path(folder, "results.csv").exists():  # a step that did not run leaves its glob unexpanded
            print(f"== {folder}: no results.csv")
            continue
        df = pd.read_csv(Path(folder, "results.csv"))
        print(f"== {folder}: {len(df)} rows, {(df.status == 'PASS').sum()} PASS, {(df.status == 'FAIL').sum()} FAIL")
        for (m, n, k), g in df.groupby(["m", "n", "k"], sort=True):
            base = g[g.implementation == "library.cublas"].median_ms
            line = f"{m:>4}x{n}x{k:<5} cuBLAS {base.iloc[0] * 1e3 if len(base) else float('nan'):8.2f} us"
            for _, r in g[g.implementation != "library.cublas"].iterrows():
                line += (f" | {r.implementation.split('.tuned')[0][:20]} {r.status} {r.pct_of_baseline:6.1f}% "
                         f"{what_ran(str(r.notes))}")
            print(line)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
