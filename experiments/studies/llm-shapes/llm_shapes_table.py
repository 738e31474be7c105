"""Issue 25's LLM-shapes study read against its goals, from two runs (fresh races, then on the pick cache):
    PYTHONPATH=. python3 experiments/studies/llm-shapes/llm_shapes_table.py RUN1[,RUN1b...] RUN2[,RUN2b...] [COMPILE_RUN] > table.md
RUN2 `-`: one run only (a variant of the study without its rerun: the run-2 columns and lines are left out).
RUN1 and RUN2 are run folders (results.json or .csv, plain or gzipped; a merged run of shards is one folder);
several, comma-separated, are joined problem by problem: a problem's rows come from the folder that has most of
them (a run cut short leaves its last problem with a row or two, measured whole in another folder).
Prints a Markdown table per problem (cuBLAS's time, tuned CUTLASS's % of it, the best hand-written row's %, which
row, its HBM GB/s beside cuBLAS's at decode, and both again in run 2 with the move), then each goal of the issue
with the rows that decide it. % of cuBLAS is the run's own (same run, same process, same contract). COMPILE_RUN, a
run of experiments/studies/llm-shapes/llm_shapes_compile.yaml, adds torch.compile's % of that run's own cuBLAS row as a
column. A run measured with energy (`run --energy`) adds each problem's millijoules per GEMM of cuBLAS, tuned CUTLASS and
the best hand-written row, and a closing line on where the ranking by energy differs from the ranking by time."""

from __future__ import annotations

import math
import re
import sys

import pandas as pd

from gemmcompare.report.energy_ranking import flip_lines

HAND_WRITTEN = ("decode", "gemv", "hopper.best", "hopper.split_k", "hopper.stream_k", "mma_sync")
PREFILL_M = 2048


def family(implementation: str) -> str:
    name = implementation.split(".tuned")[0].split("[")[0]
    return name if name.startswith(("hopper.", "library.")) else name.split(".")[0]


def load(folders: str) -> pd.DataFrame:
    import gemmcompare

    parts = [gemmcompare.load(folder)[0] for folder in folders.split(",")]
    sizes = [part.groupby(["m", "n", "k"]).size() for part in parts]
    # problem -> the part with most rows for it (the first of equals)
    best = {key: max(range(len(parts)), key=lambda i: (sizes[i].get(key, 0), -i))
            for key in set().union(*(s.index for s in sizes))}
    df = pd.concat([part[[best[(m, n, k)] == i for m, n, k in zip(part.m, part.n, part.k)]]
                    for i, part in enumerate(parts)], ignore_index=True)
    df = df[df.status == "PASS"].copy()
    df["fam"] = df.implementation.map(family)
    df["gb_s"] = df.unique_bytes / (df.median_ms * 1e-3) / 1e9
    df["pick"] = df.notes.astype(str).map(lambda s: (re.search(r"tuned: (\S+)", s) or [None, ""])[1])
    df["cached"] = df.notes.astype(str).str.contains("pick reused")
    return df


def _mj(row: pd.Series) -> float:
    """The row's energy per GEMM in millijoules (NaN for a row measured without energy)."""
    j = row.get("energy_j_per_gemm")
    return 1e3 * float(j) if j is not None and not pd.isna(j) else math.nan


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per problem: cuBLAS ms and GB/s, CUTLASS %, the best hand-written row's %, family and GB/s."""
    out = []
    for (m, n, k), g in df.groupby(["m", "n", "k"]):
        base = g[g.fam == "library.cublas"]
        cut = g[g.fam == "cutlass"]
        hand = g[g.fam.isin(HAND_WRITTEN)].sort_values("pct_of_baseline", ascending=False)
        best = hand.iloc[0] if len(hand) else None
        out.append({"m": m, "n": n, "k": k,
                    "cublas_ms": base.median_ms.iloc[0] if len(base) else math.nan,
                    "cublas_gb_s": base.gb_s.iloc[0] if len(base) else math.nan,
                    "cutlass_pct": cut.pct_of_baseline.iloc[0] if len(cut) else math.nan,
                    "cutlass_pick": cut.pick.iloc[0] if len(cut) else "",
                    "cutlass_cached": bool(cut.cached.iloc[0]) if len(cut) else False,
                    "hand_pct": best.pct_of_baseline if best is not None else math.nan,
                    "hand_fam": best.fam if best is not None else "",
                    "hand_gb_s": best.gb_s if best is not None else math.nan,
                    "cublas_mj": _mj(base.iloc[0]) if len(base) else math.nan,
                    "cutlass_mj": _mj(cut.iloc[0]) if len(cut) else math.nan,
                    "hand_mj": _mj(best) if best is not None else math.nan})
    return pd.DataFrame(out).set_index(["m", "n", "k"])


def second_opinion(df: pd.DataFrame) -> str:
    """How often nvidia-matmul-heuristics decided a race: winners the project's model alone would have left out
    (not among its KEEP_PREDICTED fastest, ties included) that NVIDIA's ranking kept."""
    from gemmcompare.tuning.select import KEEP_PREDICTED, _kept

    estimated = saved = 0
    for timing in df.timing:
        tuning = (timing or {}).get("tuning") or {}
        nvidia = tuning.get("nvidia_ms") or {}
        if not nvidia or tuning.get("cached"):
            continue
        estimated += 1
        ours = _kept({n: ms for n, ms in (tuning.get("predicted_ms") or {}).items() if ms is not None}, KEEP_PREDICTED)
        winner = tuning.get("winner")
        if winner not in ours and winner in _kept(nvidia, KEEP_PREDICTED):
            saved += 1
    return (f"nvidia-matmul-heuristics estimated the candidates of {estimated} fresh races; in {saved} the winner was "
            f"one the project's model alone would have left out")


def geomean(values) -> float:
    values = [v for v in values if v == v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def inductor_choice(timing: dict) -> str:
    """What a torch.compile row's inductor code ran (its `timing.inductor_kernels`): cuBLAS (ATen's extern call), a
    Triton mm template, or a Triton reduction (inductor rewrites an M = 1 mm as a multiply and a sum over K)."""
    kernels = (timing or {}).get("inductor_kernels") or ""
    if not kernels:
        return ""
    return ("cuBLAS" if "extern_kernels" in kernels else "Triton template" if "triton_tem" in kernels
            else "Triton reduction" if "triton_red" in kernels else "Triton")


def compiled(folder: str | None) -> pd.DataFrame:
    """Per problem: torch.compile's % of its own run's cuBLAS, and what inductor ran (empty without a run)."""
    if not folder:
        return pd.DataFrame(columns=["pct", "ran"])
    df = load(folder)
    rows = df[df.implementation == "library.torch_compile"]
    return pd.DataFrame({"pct": rows.pct_of_baseline.values, "ran": rows.timing.map(inductor_choice).values},
                        index=pd.MultiIndex.from_arrays([rows.m, rows.n, rows.k], names=["m", "n", "k"]))


def own_moves(r1: pd.DataFrame, r2: pd.DataFrame, rows: pd.DataFrame) -> str:
    """For rows whose % moved: how much their own median moved, and how much cuBLAS's did, in percent, with the
    row's median SM clock in each run when it differs (a power cap lowers it the longer a heavy problem samples)."""
    base = r1[r1.implementation == "library.cublas"].merge(
        r2[r2.implementation == "library.cublas"], on=["m", "n", "k"], suffixes=("_1", "_2")).set_index(["m", "n", "k"])
    parts = []
    for r in rows.itertuples():
        b = base.loc[(r.m, r.n, r.k)]
        parts.append(f"{r.m}x{r.n}x{r.k} {family(r.implementation)} {r.pct_of_baseline_2 - r.pct_of_baseline_1:+.1f} "
                     f"(its time {100 * (r.median_ms_2 / r.median_ms_1 - 1):+.1f}%, cuBLAS's "
                     f"{100 * (b.median_ms_2 / b.median_ms_1 - 1):+.1f}%"
                     + (f"; its SM clock {r.sm_clock_mhz_1:.0f} -> {r.sm_clock_mhz_2:.0f} MHz"
                        if r.sm_clock_mhz_1 != r.sm_clock_mhz_2 else "") + ")")
    return ", ".join(parts)


def main(run1: str, run2: str, compile_run: str | None = None) -> None:
    rerun = run2 != "-"
    r1 = load(run1)
    r2 = load(run2) if rerun else None
    s1 = summarize(r1)
    s2 = summarize(r2) if rerun else s1.iloc[0:0]
    tc = compiled(compile_run)
    extra = " torch.compile % |" if compile_run else ""
    energy = bool(s1.cublas_mj.notna().any())
    extra += " mJ/GEMM cuBLAS / CUTLASS / hand-written |" if energy else ""
    again_head = " run 2: CUTLASS / best hand-written | move (points) |" if rerun else ""
    print(f"| problem | cuBLAS us | CUTLASS tuned % | best hand-written % | which | its GB/s (cuBLAS) |{again_head}{extra}")
    print("|---|---:|---:|---:|---|---:|" + ("---|---|" if rerun else "") + ("---:|" if compile_run else "")
          + ("---:|" if energy else ""))
    for key, row in s1.iterrows():
        m, n, k = key
        decode = m < PREFILL_M
        gb = f"{row.hand_gb_s:.0f} ({row.cublas_gb_s:.0f})" if decode else ""
        if key in s2.index:
            b = s2.loc[key]
            again = f"{b.cutlass_pct:.1f} / {b.hand_pct:.1f}"
            move = f"{b.cutlass_pct - row.cutlass_pct:+.1f} / {b.hand_pct - row.hand_pct:+.1f}"
        else:
            again, move = "not reached", ""
        cell = ""
        if compile_run:
            cell = f" {tc.loc[key].pct:.1f} ({tc.loc[key].ran}) |" if key in tc.index else " not reached |"
        again_cells = f" {again} | {move} |" if rerun else ""
        if energy:
            cell += f" {row.cublas_mj:.3g} / {row.cutlass_mj:.3g} / {row.hand_mj:.3g} |"
        print(f"| {m}x{n}x{k} | {row.cublas_ms * 1e3:.2f} | {row.cutlass_pct:.1f} | {row.hand_pct:.1f} | "
              f"{row.hand_fam} | {gb} |{again_cells}{cell}")

    prefill = s1[s1.index.get_level_values(0) >= PREFILL_M]
    decode = s1[s1.index.get_level_values(0) < PREFILL_M]
    print()
    print(f"- problems: {len(s1)} in run 1" + (f", {len(s2)} in run 2" if rerun else " (no rerun)"))
    low = s1[s1.cutlass_pct < 95]
    print(f"- tuned CUTLASS >= 95% at every problem: {'met' if low.empty else 'NOT met'} "
          f"(min {s1.cutlass_pct.min():.1f}%; below: {', '.join(f'{m}x{n}x{k} {v:.1f}' for (m, n, k), v in low.cutlass_pct.items()) or 'none'}); "
          f"geometric mean {geomean(s1.cutlass_pct):.1f}%"
          + (f" (run 2: {geomean(s2.cutlass_pct):.1f}%; goal 100%)" if rerun else " (goal 100%)"))
    weakest = "x".join(str(int(v)) for v in decode.hand_pct.idxmin()) if decode.hand_pct.notna().any() else "none"
    print(f"- best hand-written >= 90% at prefill: min {prefill.hand_pct.min():.1f}%; >= 80% at decode: min "
          f"{decode.hand_pct.min():.1f}% ({weakest})")
    beat = decode[decode.hand_pct >= 110]
    print(f"- a project kernel >= 110% of cuBLAS at decode: {len(beat)} problem{'' if len(beat) == 1 else 's'} "
          + ", ".join(f"{m}x{n}x{k} {r.hand_fam} {r.hand_pct:.1f}% at {r.hand_gb_s:.0f} GB/s (cuBLAS {r.cublas_gb_s:.0f})"
                      for (m, n, k), r in beat.iterrows()))
    if energy:
        print("- " + "\n  ".join(flip_lines(r1)))
    if not rerun:
        print(f"- {second_opinion(r1)}")
        return
    both = r1.merge(r2, on=["m", "n", "k", "implementation"], suffixes=("_1", "_2"))
    tuned = both[both.implementation.str.contains(r"\.tuned")]
    moved = tuned[(tuned.pct_of_baseline_2 - tuned.pct_of_baseline_1).abs() > 3]
    reused = r2[r2.implementation.str.contains(r"\.tuned")]
    print(f"- rerun on the pick cache: {int(reused.cached.sum())} of {len(reused)} tuned rows reused their pick; "
          f"{len(tuned)} tuned rows in both runs, {len(moved)} moved by more than 3 points"
          + (": " + own_moves(r1, r2, moved) if len(moved) else ""))
    headline = s1[["cutlass_pct", "hand_pct"]].merge(s2[["cutlass_pct", "hand_pct"]], left_index=True,
                                                           right_index=True, suffixes=("", "_2"))
    far = int(((headline.cutlass_pct_2 - headline.cutlass_pct).abs() > 3).sum()
              + ((headline.hand_pct_2 - headline.hand_pct).abs() > 3).sum())
    print(f"- the goals' rows (tuned CUTLASS and the best hand-written, per problem): {2 * len(headline) - far} of "
          f"{2 * len(headline)} within 3 points")
    own = (tuned.median_ms_2 / tuned.median_ms_1 - 1).abs() * 100
    print(f"- the tuned rows' own medians moved by at most {own.max():.1f}% (median {own.median():.1f}%; "
          f"{int((own > 3).sum())} by more than 3%)")
    print(f"- {second_opinion(r1)}")
    untuned = both[~both.implementation.str.contains(r"\.tuned") & (both.implementation != "library.cublas")]
    if len(untuned):
        d = (untuned.pct_of_baseline_2 - untuned.pct_of_baseline_1).abs()
        print(f"- for scale, the untuned rows (Triton) moved by up to {d.max():.1f} points (median {d.median():.1f})")
    if compile_run:
        pre, dec = tc[tc.index.get_level_values(0) >= PREFILL_M], tc[tc.index.get_level_values(0) < PREFILL_M]
        print(f"- torch.compile (max-autotune-no-cudagraphs; its own run's cuBLAS): {len(tc)} problems, geometric mean "
              f"{geomean(tc.pct):.1f}%, prefill min {pre.pct.min():.1f}%, decode min {dec.pct.min():.1f}%; inductor "
              "ran " + ", ".join(f"{what} at {count}" for what, count in tc.ran.value_counts().items()))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
