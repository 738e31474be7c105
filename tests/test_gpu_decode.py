"""The `decode` kernel (M <= 16, memory-bound) on the GPU, through the harness: every row PASSes the element-wise
bound against the FP64 reference, at the decode shapes and at the awkward ones (K % 8 != 0 under tight storage:
column starts only 8-byte aligned, the K tail; a ragged column tile; M between 8 and 16), unsplit, split
automatically and split across clusters of 8 CTAs; m = 17 is a SKIP with the reason. Runs on the device machine
(marker `gpu`). Prints each decode row's time, % of cuBLAS and the B bandwidth it streamed."""

from __future__ import annotations

import pytest

from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: decode_gpu
problems:
  - {m: 16, n: 4096, k: 4096}
  - {m: 1, n: 4096, k: 4096}
  - {m: 16, n: 4096, k: 4100}   # K % 8 != 0: under tight storage ld = 4100, 8-byte-aligned columns, a K tail
  - {m: 13, n: 1000, k: 4099}   # ragged column tile, odd K (2-byte loads under tight storage), rows 8..12
  - {m: 8, n: 2048, k: 4098}    # 4-byte loads under tight storage; M = 8: no second half of rows
  - {m: 17, n: 512, k: 512}     # above the kernel's M: a SKIP
contracts: [bf16_bf16out_f32acc_tn, f16_f32acc_tn, f16_f16out_f32acc_tn, bf16_f32acc_tn, bf16_bf16out_f32acc_tn_aligned]
implementations:
  - library.cublas
  - decode
  - decode: {cols: 16, splits: [1, 8]}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""


def test_decode_rows_pass_at_decode_shapes_and_awkward_ones(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "decode_gpu.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("decode[")]
    assert len(rows) == 6 * 5 * 3
    for row in rows:
        m, n, k = (int(v) for v in row.problem.split("x")[:3])
        if m > 16:
            assert row.status.value == "SKIP" and "m=17 > 16" in row.reason, (row.implementation, row.reason)
            continue
        assert row.status.value == "PASS", (row.implementation, row.problem, row.contract, row.status, row.reason)
        streamed_gb_s = n * k * 2 / (row.median_ms * 1e-3) / 1e9  # B's bytes, read once
        print(f"{row.implementation:<48} {row.problem:<16} {row.contract:<32} {row.median_ms * 1e3:8.2f} us "
              f"{row.pct_of_baseline or 0:6.1f}% of cuBLAS  B at {streamed_gb_s:7.0f} GB/s")


GEMV_SPEC = """\
name: gemv_gpu
problems:
  - {m: 1, n: 4096, k: 4096}
  - {m: 1, n: 4096, k: 4100}    # K % 8 != 0: 8-byte-aligned columns under tight storage, a K tail
  - {m: 3, n: 1000, k: 4099}    # odd K (2-byte loads under tight storage), N not a multiple of the CTA's warps, ROWS 4
  - {m: 2, n: 2048, k: 4098}    # 4-byte loads under tight storage, ROWS 2
  - {m: 4, n: 333, k: 200}      # K shorter than one warp load: only the remainder loop and the tail
  - {m: 5, n: 512, k: 512}      # above the kernel's M: a SKIP
contracts: [bf16_bf16out_f32acc_tn, f16_f32acc_tn, f16_f16out_f32acc_tn, bf16_f32acc_tn, bf16_bf16out_f32acc_tn_aligned]
implementations:
  - library.cublas
  - gemv
  - gemv: {warps: 8, unroll: 16}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: evict, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""


def test_gemv_rows_pass_at_m_up_to_4_and_awkward_shapes(tmp_path):
    runner = parent.Runner(parse_spec(GEMV_SPEC, "gemv_gpu.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("gemv[")]
    assert len(rows) == 6 * 5 * 2
    for row in rows:
        m = int(row.problem.split("x")[0])
        if m > 4:
            assert row.status.value == "SKIP" and "m=5 > 4" in row.reason, (row.implementation, row.reason)
            continue
        assert row.status.value == "PASS", (row.implementation, row.problem, row.contract, row.status, row.reason)
        print(f"{row.implementation:<32} {row.problem:<16} {row.contract:<32} {row.median_ms * 1e3:8.2f} us "
              f"{row.pct_of_baseline or 0:6.1f}% of cuBLAS")
