"""Every row of a grouped problem samples in batches of one size, on the GPU (contracts/timing.py): at 256 busy
experts the loop of cuBLAS calls declares its 256 kernels a launch, so the problem's batch is 2 for every row from
the first round (torch's and Triton's one-launch grouped GEMMs included) and the loop's gate never has to learn it
by starving; at 8 experts every row keeps the spec's 10. On an H100 at 4e87cbd the loop alone ran batches of 2
beside the others' 10 (experiments/studies/moe-shapes/h100/bf16-4e87cbd/, in git history); at 7b97acd every row
ran batches of 2 there (h100/bf16-7b97acd/)."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: grouped_batch_gpu
problems:
  - grouped: {n: 256, k: 512, routing: {tokens: 4096, top_k: 8, experts: 256, distribution: balanced, seed: 0}}
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130, 12, 200, 1, 96]}
contracts: [bf16_bf16out_f32acc_tn]
implementations: [library.torch_grouped_mm, library.cublas_loop, library.triton_grouped]
baseline: library.torch_grouped_mm
correctness: {fixtures: [uniform]}
timing: {l2: flush, lockstep: true, samples: {min: 10, max: 30}}
"""


def test_the_rows_of_a_problem_share_the_batch_the_loop_of_calls_needs(tmp_path):
    out = Runner(parse_spec(SPEC, str(tmp_path / "grouped_batch_gpu.yaml")),
                 RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    assert_complete(out)
    rows = [r for r in out.rows if r.status is Status.PASS]
    assert len(rows) == 6, [(r.implementation, r.problem, r.status.value, r.reason) for r in out.rows]
    for r in rows:
        t = r.timing
        print(f"{r.problem:40s} {r.implementation:28s} batch {t.get('batch')} starved {t['starved_batches']} "
              f"{r.median_ms:.4f} ms")
        if len(r.grouped["ms"]) == 256:
            assert t["batch"] == 2 and t["batch_setting"] == 10, (r.implementation, t)
            assert "library.cublas_loop enqueues 256 kernels a launch" in t["batch_why"]
            assert "batch_restarts" not in t and t["starved_batches"] <= 2  # the first gates, before they are sized
        else:  # 7 busy groups: 10 launches of 7 kernels fit the queue
            assert t["batch"] == 10 and "batch_why" not in t, (r.implementation, t)
