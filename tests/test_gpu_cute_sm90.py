"""The CuTe Hopper kernel (kernel template cute_sm90) on the GPU, through the harness: both schedules PASS the
element-wise bound against the FP64 reference beside library.cublas, at squares, at M, N and K short of a tile
(TMA's zero fill and the predicated epilogue), at M = 1, with f32, bf16 and f16 output, under both storage
policies (tight: a K that is not a multiple of 8 is copied into 16-byte rows; aligned: read in place) and with
alpha and beta. Runs on the device machine (marker `gpu`). Prints each row's time and % of cuBLAS.

Written before any GPU run of the kernel (docs/cutlass.md "The CuTe Hopper kernel"): the first run on an H200
is this file."""

from __future__ import annotations

import pytest

from gemmcompare.results import Status
from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

CONFIGS = ("cute_sm90_ws_128x256x64_c2_4st", "cute_sm90_pipe_128x128x64_c1_4st")

SPEC = """\
name: cute_sm90_gpu
problems:
  - {m: 2048, n: 2048, k: 2048}
  - {m: 257, n: 263, k: 251}       # every dimension short of a tile; K not a multiple of 8 (tight: copied)
  - {m: 3999, n: 5001, k: 4097}    # the study's odd shape
  - {m: 1, n: 4096, k: 4096}       # one row of 128: TMA fills 127 with zeros, the epilogue stores one
  - {m: 130, n: 72, k: 72}         # a K tail of 8 after one 64-wide k-tile; N short of every tile
contracts:
  - f16_f32acc_tn
  - f16_f32acc_tn_aligned
  - bf16_bf16out_f32acc_tn
  - f16_f16acc_tn
  - {name: scaled, a: f16, c: f32, layout: tn, alpha: 2.0, beta: 0.5}
implementations:
  - library.cublas
  - cutlass: {config: [CONFIGS]}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
""".replace("CONFIGS", ", ".join(CONFIGS))


def test_cute_sm90_rows_pass_beside_cublas(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "cute_sm90_gpu.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("cutlass.cute_sm90")]
    for row in rows:
        print(f"{row.implementation[-50:]:<50} {row.problem:<18} {row.contract:<24} {row.status.value} "
              f"{(row.median_ms or 0) * 1e3:9.2f} us {row.pct_of_baseline or 0:6.1f}% of cuBLAS {row.reason or ''}")
    assert len(rows) == len(CONFIGS) * 5 * 5
    for row in rows:
        assert row.status is Status.PASS, (row.implementation, row.problem, row.contract, row.status, row.reason)
    cublas = [r for r in out.rows if r.implementation == "library.cublas"]
    assert cublas and all(r.status is Status.PASS for r in cublas)
