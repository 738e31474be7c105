"""`hopper.split_k` on the GPU, through the harness: every row PASSes the element-wise bound against the FP64
reference at decode shapes (split per problem, and a fixed 16-way split), at long K, at awkward shapes (K % 8 != 0
under tight storage: timed copies; ragged tiles in M and N; K shorter than one k tile: no split), and under the
aligned storage policy; prefill-sized problems take the unsplit path. Runs on the device machine (marker `gpu`).
Prints each row's time and % of cuBLAS."""

from __future__ import annotations

import pytest

from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: split_k_gpu
problems:
  - {m: 64, n: 14336, k: 4096}
  - {m: 128, n: 4096, k: 14336}
  - {m: 16, n: 4096, k: 4096}
  - {m: 1, n: 4096, k: 4096}
  - {m: 100, n: 1000, k: 4099}    # ragged tiles in M and N; K % 8 != 0 (copied under tight storage), a K tail
  - {m: 64, n: 512, k: 33}        # one k tile: never split
  - {m: 2048, n: 2048, k: 1024}   # tiles enough: the unsplit path
contracts: [bf16_bf16out_f32acc_tn, f16_f32acc_tn, f16_f16out_f32acc_tn_aligned]
implementations:
  - library.cublas
  - hopper.split_k
  - hopper.split_k: {splits: 16}
  - hopper.split_k: {block: [128, 256, 64], consumers: 2, stages: 4}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
"""


def test_split_k_rows_pass_at_decode_long_k_and_awkward_shapes(tmp_path):
    runner = parent.Runner(parse_spec(SPEC, "split_k_gpu.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False, cache_dir=tmp_path / "cache"))
    out = runner.run()
    assert_complete(out)
    rows = [r for r in out.rows if r.implementation.startswith("hopper.split_k")]
    assert len(rows) == 7 * 3 * 3
    for row in rows:
        assert row.status.value == "PASS", (row.implementation, row.problem, row.contract, row.status, row.reason)
        print(f"{row.implementation:<80} {row.problem:<18} {row.contract:<30} {row.median_ms * 1e3:9.2f} us "
              f"{row.pct_of_baseline or 0:6.1f}% of cuBLAS")
