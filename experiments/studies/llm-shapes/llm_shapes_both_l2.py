"""The LLM-shapes study under two L2 policies, side by side, read against issue 43's goals:
    PYTHONPATH=. python3 experiments/studies/llm-shapes/llm_shapes_both_l2.py \
        flush=RUN1[,RUN1b...]:RUN2[,RUN2b...] evict=RUN1[,...]:RUN2[,...] > table.md
Each policy's runs come from llm_shapes_on_device.sh (flush: the spec's own policy; evict: L2=evict), RUN1 the
fresh races and RUN2 the rerun on the pick cache (`-` for none); several folders, comma-separated, are joined as
llm_shapes_table.py joins them (the shards of one run). Per problem: tuned CUTLASS's and the best hand-written
row's % of cuBLAS under each policy (each policy's own cuBLAS row: same run, same process), then each goal:
  - tuned CUTLASS >= 97% of cuBLAS at every problem, geometric mean >= 100%, under both;
  - the best hand-written row >= 95% at every prefill problem and >= 90% at every decode problem, under both;
  - the rerun on the pick cache within 3 points (the goals' rows).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd

CUTLASS_MIN, CUTLASS_GEOMEAN = 97.0, 100.0
HAND_PREFILL_MIN, HAND_DECODE_MIN = 95.0, 90.0
RERUN_POINTS = 3.0


def _table_module():
    """llm_shapes_table.py (its loading, per-problem summary and geometric mean), imported by path."""
    path = Path(__file__).with_name("llm_shapes_table.py")
    spec = importlib.util.spec_from_file_location("llm_shapes_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


table = _table_module()


def parse(arg: str) -> tuple[str, str, str]:
    """'POLICY=RUN1:RUN2' -> (policy, run1, run2)."""
    policy, sep, runs = arg.partition("=")
    run1, sep2, run2 = runs.partition(":")
    if not sep or not sep2 or not policy or not run1 or not run2:
        sys.exit(f"llm_shapes_both_l2: {arg!r} is not POLICY=RUN1:RUN2 (RUN2 '-' for no rerun)")
    return policy, run1, run2


def goals(policy: str, s1: pd.DataFrame, s2: pd.DataFrame | None) -> list[str]:
    """Issue 43's goals for one policy: each a line that says met or NOT met, with the rows that decide it."""
    prefill = s1[s1.index.get_level_values(0) >= table.PREFILL_M]
    decode = s1[s1.index.get_level_values(0) < table.PREFILL_M]
    low = s1[s1.cutlass_pct < CUTLASS_MIN]
    geo = table.geomean(s1.cutlass_pct)
    lines = [
        f"- {policy}: tuned CUTLASS >= {CUTLASS_MIN:.0f}% everywhere: {'met' if low.empty else 'NOT met'} (min "
        f"{s1.cutlass_pct.min():.1f}%; below: {_listed(low.cutlass_pct)}); geometric mean {geo:.1f}% "
        f"({'met' if geo >= CUTLASS_GEOMEAN else 'NOT met'}: goal {CUTLASS_GEOMEAN:.0f}%)",
        f"- {policy}: best hand-written >= {HAND_PREFILL_MIN:.0f}% at prefill: "
        f"{_floor(prefill.hand_pct, HAND_PREFILL_MIN)}; >= {HAND_DECODE_MIN:.0f}% at decode: "
        f"{_floor(decode.hand_pct, HAND_DECODE_MIN)}",
    ]
    if s2 is None:
        lines.append(f"- {policy}: no rerun on the pick cache")
    else:
        both = s1[["cutlass_pct", "hand_pct"]].merge(s2[["cutlass_pct", "hand_pct"]], left_index=True,
                                                     right_index=True, suffixes=("", "_2"))
        far = ((both.cutlass_pct_2 - both.cutlass_pct).abs() > RERUN_POINTS).sum() + \
            ((both.hand_pct_2 - both.hand_pct).abs() > RERUN_POINTS).sum()
        lines.append(f"- {policy}: rerun on the pick cache: {2 * len(both) - far} of {2 * len(both)} goal rows within "
                     f"{RERUN_POINTS:.0f} points ({'met' if far == 0 else 'NOT met'}; {len(s1) - len(both)} problems "
                     f"not in the rerun)")
    return lines


def _floor(values: pd.Series, floor: float) -> str:
    """'met (min ...)' or 'NOT met (min ...; below: ...)' for a floor on every value; 'no problems' for none."""
    if values.empty:
        return "no problems"
    below = values[~(values >= floor)]  # a missing row (NaN) is below
    return f"{'met' if below.empty else 'NOT met'} (min {values.min():.1f}%; below: {_listed(below)})"


def _listed(values: pd.Series) -> str:
    return ", ".join(f"{m}x{n}x{k} {v:.1f}" for (m, n, k), v in values.items()) or "none"


def render(policies: dict[str, tuple[pd.DataFrame, pd.DataFrame | None]]) -> str:
    """The Markdown: one table (per problem, each policy's CUTLASS % and best hand-written %, which row), then the
    goals per policy. `policies`: policy -> (run 1's per-problem summary, run 2's or None)."""
    names = list(policies)
    head = "| problem | " + " | ".join(f"{p}: cuBLAS us | {p}: CUTLASS % | {p}: best hand-written % (which)"
                                      for p in names) + " |"
    out = [head, "|---|" + "---:|---:|---:|" * len(names)]
    keys = sorted(set().union(*(s1.index for s1, _ in policies.values())))
    for key in keys:
        cells = []
        for policy in names:
            s1 = policies[policy][0]
            if key not in s1.index:
                cells += ["not reached", "", ""]
                continue
            r = s1.loc[key]
            cells += [f"{r.cublas_ms * 1e3:.2f}", f"{r.cutlass_pct:.1f}", f"{r.hand_pct:.1f} ({r.hand_fam})"]
        out.append(f"| {'x'.join(str(v) for v in key)} | " + " | ".join(cells) + " |")
    out.append("")
    for policy in names:
        out += goals(policy, *policies[policy])
    return "\n".join(out)


def main(args: list[str]) -> None:
    if len(args) < 1:
        sys.exit(__doc__)
    policies = {}
    for arg in args:
        policy, run1, run2 = parse(arg)
        s1 = table.summarize(table.load(run1))
        policies[policy] = (s1, table.summarize(table.load(run2)) if run2 != "-" else None)
    print(render(policies))


if __name__ == "__main__":
    main(sys.argv[1:])
