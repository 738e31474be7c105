"""The FP8 study's table (issue 26) from run folders (every folder with a results.json or results.csv, plain or
gzipped, under the ones named; their rows joined):
    python3 experiments/studies/fp8/fp8_study_table.py RUN_DIR [RUN_DIR ...]
Per problem and contract, every row's status, TFLOP/s and % of library.cublaslt_fp8 under the same contract;
then per problem the FP8 rows' speed-up over the BF16 cuBLAS row of the same run (a ratio across contracts,
which the report's % of baseline never mixes) and the issue's goals read from these rows. Rows measured with
energy (`run --energy`) also show joules per GEMM with its CI and GFLOP per joule, and the table ends with where
the ranking by energy differs from the ranking by time (gemmcompare/report/energy_ranking.py)."""

import sys
from pathlib import Path

import pandas as pd

from gemmcompare.report.energy_ranking import flip_lines

BF16 = "bf16_bf16out_f32acc_tn"
TENSOR = "e4m3_bf16out_f32acc_tn_tensor"


def load(folders: list[str]) -> pd.DataFrame:
    """Every run folder under each of `folders` (a folder holding results.json / .csv, maybe gzipped)."""
    import gemmcompare

    frames = []
    for folder in folders:
        runs = sorted({p.parent for p in Path(folder).rglob("results.*")})
        if not runs:
            sys.exit(f"{folder}: no results.json or results.csv (plain or gzipped) under it")
        frames += [gemmcompare.load(run)[0] for run in runs]
    return pd.concat(frames, ignore_index=True)


def short(name: str) -> str:
    return (name.replace("cutlass.cutlass3x_sm90_fp8_e4m3_bf16_f32_", "cutlass ")
            .replace("_epitma_stauto_persistent_tn_align16_rasterH_swz1", "")
            .replace("block=128x128x128,cluster_m=1,consumers=2,group=8,", ""))[:64]


def energy_text(row: pd.Series) -> str:
    """'  J/GEMM (CI) GFLOP/J' for a row measured with energy, else ''."""
    j = row.get("energy_j_per_gemm")
    if j is None or pd.isna(j):
        return ""
    ci = row.get("energy_ci_rel")
    ci_text = f" (±{100 * ci:.1f}%)" if ci is not None and not pd.isna(ci) else ""
    return f"  {1e3 * j:8.2f} mJ{ci_text} {row.get('gflop_per_j', float('nan')):6.0f} GFLOP/J"


def main(folders: list[str]) -> None:
    df = load(folders)
    ran = df[df.status != "SKIP"]
    for (problem, contract), g in ran.groupby(["problem", "contract"], sort=False):
        base = g[g.implementation == ("library.cublas" if contract == BF16 else "library.cublaslt_fp8")]
        base_tflops = float(base.tflops.iloc[0]) if len(base) and base.status.iloc[0] == "PASS" else float("nan")
        print(f"{problem} {contract}")
        for _, r in g.iterrows():
            pct = 100 * r.tflops / base_tflops
            print(f"    {short(r.implementation):<64} {r.status:<5} {r.tflops:8.1f}  {pct:6.1f}%" + energy_text(r))
    print("\nFP8 over BF16 (same run, same shape; TFLOP/s of the best PASS row of each kind)")
    for problem, g in ran[ran.status == "PASS"].groupby("problem", sort=False):
        bf16 = g[(g.contract == BF16) & (g.implementation == "library.cublas")].tflops
        if not len(bf16):
            continue
        line = [f"{problem}: bf16 cuBLAS {float(bf16.iloc[0]):.1f}"]
        for contract, c in g[g.contract != BF16].groupby("contract", sort=False):
            best = c.loc[c.tflops.idxmax()]
            lt = c[c.implementation == "library.cublaslt_fp8"].tflops
            lt_text = f"cuBLASLt {float(lt.iloc[0]) / float(bf16.iloc[0]):.2f}x, " if len(lt) else ""
            line.append(f"  {contract.replace('e4m3_bf16out_f32acc_tn_', '')}: {lt_text}best "
                        f"{best.tflops / float(bf16.iloc[0]):.2f}x ({short(best.implementation)})")
        print("\n".join(line))
    if "energy_j_per_gemm" in df and df["energy_j_per_gemm"].notna().any():
        print()
        print("\n".join(flip_lines(df)))


if __name__ == "__main__":
    main(sys.argv[1:] or sys.exit(__doc__))
