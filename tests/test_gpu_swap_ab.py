"""The swapped SM90 CUTLASS kernels (D^T = B^T A^T) on the GPU, through the harness: every row PASSes the
element-wise bound against the FP64 reference at decode shapes (M = 1..64), at a ragged N and M and at a
prefill-sized problem, under split-K, stream-K and ping-pong, with BF16 and FP32 output. Runs on the device
machine (marker `gpu`). Prints each row's time and % of cuBLAS."""

from __future__ import annotations

import pytest

from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: swap_ab_gpu
problems:
  - {m: 1, n: 4096, k: 4096}
  - {m: 16, n: 6144, k: 4096}
  - {m: 7, n: 1000, k: 4096}      # M and N short of any tile: the swapped kernel's rows and columns clip
  - {m: 64, n: 4096, k: 14336}
  - {m: 2048, n: 2048, k: 1024}   # many tiles: stream-K's heuristic and split-K on a prefill shape
contracts: [bf16_bf16out_f32acc_tn, f16_f32acc_tn]
implementations:
  - library.cublas
  - cutlass: {config: sm90_coop_swapab_streamk_128x16x128_c1x1}
  - cutlass: {config: sm90_coop_swapab_splitk4_128x16x128_c1x1}
  - cutlass: {config: sm90_coop_swapab_splitk2_128x64x128_c1x1}
  - cutlass: {config: sm90_pp_swapab_64x16x128_c1x1}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""


def test_swapped_cutlass_rows_pass_at_decode_and_awkward_shapes(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "swap_ab_gpu.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("cutlass.")]
    assert len(rows) == 4 * 5 * 2
    for row in rows:
        print(f"{row.implementation[-60:]:<60} {row.problem:<16} {row.contract:<24} {row.status.value} "
              f"{(row.median_ms or 0) * 1e3:9.2f} us {row.pct_of_baseline or 0:6.1f}% of cuBLAS {row.reason or ''}")
    for row in rows:
        assert row.status.value == "PASS", (row.implementation, row.problem, row.contract, row.status, row.reason)
