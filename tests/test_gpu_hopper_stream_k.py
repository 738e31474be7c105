"""`hopper.stream_k` on the GPU (an H100/H200: sm_90a), through the harness, beside cuBLAS: every row PASSes the
element-wise bound against the FP64 reference at part-empty-last-wave prefill shapes (8192x5120x4096 on 132 SMs:
1280 tiles, 9 full waves and 92 left over, so 224 tiles split by k iterations), at shapes where every tile is
stream-K (fewer tiles than SMs, one tile), at ragged M, N and K (partial tiles finished by a CTA that did not load
their last rows; K % 8 != 0 copied under tight storage), at K shorter than one k tile (one k iteration: nothing to
split), at exactly full waves (auto: data-parallel), with alpha and beta (the finisher's epilogue reads C), in each
schedule. A wrong fixup (a partial added twice or never, a flag seen before its partial) shows as a FAIL here, and a
hang as a row timeout. Runs on the device machine (marker `gpu`); prints each row's time and % of cuBLAS.

K = 0 cannot be written as a spec problem (dimensions are positive); the step takes it through the ladder's shared
prepare() (C = beta * C, no workspace), which extensions/hopper/check/hopper_check.cu runs for the other steps.

PASSed on an H100 at 644c640 (receipt experiments/studies/gpu-tests/h100/new-rows-644c640/)."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: hopper_stream_k_gpu
problems:
  - {m: 8192, n: 5120, k: 4096}   # 1280 tiles: hybrid (224 tiles stream-K, 108 k iterations a CTA on 132 SMs)
  - {m: 2048, n: 14336, k: 4096}  # 896 tiles: 6 waves + 104 (79% full): hybrid
  - {m: 2200, n: 4100, k: 200}    # ragged M and N; 306 tiles, K of 4 k tiles (about 5 k iterations a CTA)
  - {m: 1000, n: 1000, k: 4099}   # 32 tiles < SMs: every tile stream-K; K % 8 != 0 and a K tail
  - {m: 100, n: 200, k: 4096}     # one tile, split over 8 CTAs
  - {m: 611, n: 613, k: 33}       # K shorter than one k tile: one iteration a tile, nothing split
  - {m: 4096, n: 8448, k: 1024}   # 32 x 33 = 1056 tiles = 8 whole waves on 132 SMs: auto is data-parallel
contracts:
  - bf16_bf16out_f32acc_tn
  - f16_f32acc_tn
  - f16_f16out_f32acc_tn_aligned
  - {name: scaled_bf16, a: bf16, c: f32, layout: tn, alpha: 2.0, beta: 0.5}
implementations:
  - library.cublas
  - hopper.best
  - hopper.stream_k
  - hopper.stream_k: {schedule: stream_k}
  - hopper.stream_k: {schedule: hybrid}
  - hopper.stream_k: {schedule: data_parallel}
  - hopper.stream_k: {block: [128, 128, 64], consumers: 1, stages: 6}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""
PROBLEMS, CONTRACTS, ROWS = 7, 4, 5


def test_stream_k_rows_pass_at_part_wave_ragged_and_one_tile_shapes(tmp_path):
    out = Runner(parse_spec(SPEC, "hopper_stream_k_gpu.yaml"), RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache")).run()
    assert_complete(out)
    mine = [r for r in out.rows if r.implementation.startswith("hopper.stream_k")]
    assert len(mine) == ROWS * PROBLEMS * CONTRACTS
    bad = [f"{r.implementation} {r.problem} {r.contract}: {r.status.value} {r.reason}" for r in mine
           if r.status is not Status.PASS]
    assert not bad, "\n".join(bad)
    for r in [r for r in out.rows if r.implementation.startswith(("hopper.", "library."))]:
        pct = f"{r.pct_of_baseline:6.1f}% of cuBLAS" if r.pct_of_baseline else ""
        print(f"{r.implementation:<96} {r.problem:<18} {r.contract:<30} {(r.median_ms or 0) * 1e3:9.2f} us {pct}")
