"""Occupancy of every hand-written and CUTLASS kernel: the runtime's answer against the model's.

    python3 experiments/studies/occupancy/occupancy_on_device.py OUT_DIR [SPEC] [--budget SECONDS]

For each implementation of SPEC (default experiments/studies/occupancy/occupancy_kernels.yaml), under the first contract it
supports: its kernel TUs are compiled alone (no torch binding), linked into a probe library with its
NAME_occupancy query, and asked about the launch it would make for the spec's first problem; the model
(gemmcompare.model.occupancy) predicts the same from the inputs a run records. Writes OUT_DIR/occupancy.csv
(every column) and OUT_DIR/occupancy.md, and prints the short table last. Kernels not compiled within the
budget are listed as such. Needs a GPU for the answers (nvcc for the rest).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("spec", nargs="?", default=str(ROOT / "experiments" / "studies" / "occupancy" / "occupancy_kernels.yaml"))
    ap.add_argument("--budget", type=float, default=230.0, help="seconds for compiling, then what is done is used")
    args = ap.parse_args(argv)
    import pandas as pd

    from gemmcompare.build.kernel_objects import CompileFailure, compile_request
    from gemmcompare.device import probe_device
    from gemmcompare.model.devices import device_from_properties
    from gemmcompare.profilers.occupancy import compare_with_model
    from gemmcompare.report.writers import markdown_table
    from gemmcompare.spec import load_spec

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    exp = load_spec(args.spec)
    live = probe_device()
    if live is None:
        print("no CUDA device: the runtime cannot answer", file=sys.stderr)
        return 3
    device = device_from_properties(live)
    problem = exp.problems[0].problem
    todo = []
    for impl in exp.implementations:
        contract = next((c for c in exp.contracts if impl.check(problem, c, live)), None)
        if contract is None:
            print(f"skip {impl.name}: no contract of the spec it runs on {live.name}")
            continue
        todo.append((impl, contract, impl.build_request(impl.target_arch(live.cc_int))))
    todo.sort(key=lambda item: not item[2].uses_cutlass)  # the slowest compiles (CUTLASS) start first
    t0 = time.time()
    workers = os.cpu_count() or 4
    pool = cf.ThreadPoolExecutor(max_workers=workers)
    futures = {pool.submit(compile_request, req): (impl, contract) for impl, contract, req in todo}
    done, late = cf.wait(futures, timeout=args.budget)
    print(f"compiled {len(done)} of {len(futures)} in {time.time() - t0:.0f} s")
    def check(fut, impl, contract) -> dict:
        line = {"implementation": impl.name, "contract": contract.name, "problem": problem.label}
        if fut in late:
            line["error"] = f"not compiled within the {args.budget:g} s budget"
        elif isinstance(fut.result(), CompileFailure):
            line["error"] = "compile failed: " + fut.result().message[:300]
        else:
            try:  # links a probe (nvcc, a few seconds) and asks the runtime: run side by side
                line = compare_with_model(impl, contract, problem, device, fut.result(), out / "probes")
            except Exception as exc:  # noqa: BLE001 - one kernel's failure is its line
                line["error"] = str(exc)[:300]
        return line

    linker = cf.ThreadPoolExecutor(max_workers=workers)
    lines = list(linker.map(lambda item: check(item[0], *item[1]), futures.items()))
    print(f"checked in {time.time() - t0:.0f} s")
    table = pd.DataFrame(lines)
    table.to_csv(out / "occupancy.csv", index=False)
    checked = table[table.get("agree").notna()] if "agree" in table else table.iloc[0:0]
    agree = int(checked["agree"].astype(bool).sum()) if len(checked) else 0
    summary = (f"{live.name}: the model's CTAs per SM (from ptxas registers, static + dynamic shared memory and "
               f"the block size a run records) equal cudaOccupancyMaxActiveBlocksPerMultiprocessor for {agree} of "
               f"{len(checked)} kernels; {len(table) - len(checked)} not checked (see error)")
    cols = [c for c in ("implementation", "contract", "runtime_blocks_per_sm", "model_ctas_per_sm",
                        "model_from_runtime_inputs", "runtime_threads", "model_threads", "runtime_registers",
                        "ptxas_registers", "runtime_static_smem", "runtime_dynamic_smem", "model_smem", "error")
            if c in table]
    shown = table[cols].fillna("").astype(str)
    shown["implementation"] = [n if len(n) <= 60 else n[:57] + "..." for n in shown["implementation"]]
    (out / "occupancy.md").write_text(f"# Occupancy: model vs runtime\n\n{summary}\n\n{markdown_table(shown)}\n")
    pool.shutdown(wait=False, cancel_futures=True)
    print(markdown_table(shown))
    print(summary)
    sys.stdout.flush()
    os._exit(0 if len(checked) and agree == len(checked) else 1)  # do not wait for compiles past the budget


if __name__ == "__main__":
    sys.exit(main())
