"""Issue 25's LLM-shapes study: which candidate of each tuned row won which problem, and which came close.

    PYTHONPATH=. python3 experiments/studies/llm-shapes/llm_shapes_picks.py RUN_FOLDER... > picks.md

Reads each run folder's results.json (a tuned row's `timing.tuning`: the race's median per candidate, the
winner, the candidates left out and why). A problem raced in several runs counts once: a fresh race is
preferred to a pick reused from the pick cache (which carries the race it came from). "Close" is a race
median within CLOSE of the winner's: a candidate a longer race could have picked instead.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import defaultdict
from pathlib import Path

from gemmcompare.store.run_folder import COMPRESSIONS

CLOSE = 0.03


def short_name(family: str, full: str) -> str:
    """A candidate as a spec spells the values tuned: the catalog name of a CUTLASS configuration, the tile,
    consumers and stages of a hopper step, the tile and stages of mma_sync, decode's cols/unroll/splits."""
    if family == "cutlass":
        return _catalog_name(full)
    params = dict(kv.split("=", 1) for kv in full[full.index("[") + 1:-1].split(",")) if "[" in full else {}
    if family.startswith("hopper."):
        return f"{params['block']} c{params['consumers']} s{params['stages']}"
    if family == "mma_sync":
        return f"{params['block']} s{params['stages']}"
    if family == "decode":
        return f"cols {params['cols']} unroll {params['unroll']} splits {params['splits']}"
    return full


@functools.lru_cache(maxsize=None)
def _catalog_name(full: str) -> str:
    """The catalog name of a CUTLASS candidate at this study's types (bf16 in and out, f32 accumulation)."""
    from gemmcompare.cutlass.catalog import catalog

    for name, entry in catalog().items():
        try:
            config = entry.resolve({"dtype": "bf16", "out": "bf16", "acc": "f32", "layout": "tn"})
        except Exception:  # noqa: BLE001 - an entry these types do not fit
            continue
        if f"cutlass.{config.procedural_name}" == full or f"cutlass.{config.kernel_name}" == full:
            return name
    return full.removeprefix("cutlass.")


def races(run_folders: list[str]) -> dict[str, dict[tuple, dict]]:
    """family -> (m, n, k) -> timing.tuning, a fresh race preferred to a cached one."""
    out: dict[str, dict[tuple, dict]] = defaultdict(dict)
    for folder in run_folders:
        # a run's results.json, or a committed receipt's compressed one (.xz, older ones .gz)
        path = next(Path(folder) / f"results.json{c}" for c in ("", *COMPRESSIONS)
                    if (Path(folder) / f"results.json{c}").exists())
        data = path.read_bytes()
        rows = json.loads(COMPRESSIONS[path.suffix](data) if path.suffix in COMPRESSIONS else data)["results"]
        for r in rows:
            tuning = (r.get("timing") or {}).get("tuning")
            if r.get("status") != "PASS" or not tuning or not tuning.get("race_ms"):
                continue
            key = (r["m"], r["n"], r["k"])
            have = out[r["family"]].get(key)
            if have is None or (have.get("cached") and not tuning.get("cached")):
                out[r["family"]][key] = tuning
    return out


def main(run_folders: list[str]) -> None:
    print(f"# Picks per tuned row ({len(run_folders)} run folders)\n")
    print(f"Won: problems whose race the candidate won. Close: lost, race median within {CLOSE:.0%} of the "
          "winner's. Raced: problems it was raced on (the model left it out of the rest). Problems as MxNxK.\n")
    for family, by_problem in sorted(races(run_folders).items()):
        won, close, raced = defaultdict(list), defaultdict(list), defaultdict(int)
        left_out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        all_candidates: set[str] = set()
        for (m, n, k), t in sorted(by_problem.items()):
            label = f"{m}x{n}x{k}"
            best = t["race_ms"][t["winner"]]
            for cand, ms in t["race_ms"].items():
                raced[cand] += 1
                if cand == t["winner"]:
                    won[cand].append(label)
                elif ms <= best * (1 + CLOSE):
                    close[cand].append(f"{label} (+{100 * (ms / best - 1):.1f}%)")
            for cand, why in (t.get("excluded") or {}).items():
                left_out[cand]["model ranked it below the first 8" if "model predicts" in why else why[:90]] += 1
            all_candidates |= set(t["race_ms"]) | set(t.get("excluded") or {})
        print(f"## {family} ({len(by_problem)} problems raced)\n")
        print("| candidate | won | close | raced | left out (problems: why) |\n|---|---|---|---:|---|")
        order = sorted(all_candidates, key=lambda c: (-len(won[c]), -len(close[c]), -raced[c], short_name(family, c)))
        for cand in order:
            print(f"| {short_name(family, cand)} | {len(won[cand])}: {', '.join(won[cand]) or '-'} | "
                  f"{len(close[cand])}: {', '.join(close[cand]) or '-'} | {raced[cand]} | "
                  + ("; ".join(f"{n}: {why}" for why, n in left_out[cand].items()) or "-") + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
