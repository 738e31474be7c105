"""Grouped problems on the GPU (experiments/byo_kernel/grouped.yaml): torch's, Triton's and cuBLAS's grouped
GEMMs (torch's and cuBLAS's: BF16 out; cuBLAS's: contiguous), the loop of cuBLAS calls and a grouped Python
callable (BF16 out) PASS every group of a listed problem (an empty group and groups below 16 tokens among them), a
Zipf-routed one and a masked one, under BF16 contracts with FP32 and BF16 outputs; the planted callables (short
groups skipped, rows written past a group's end, the last group ignored, one group accumulated in FP16) FAIL,
naming their groups."""

from pathlib import Path

import pytest

from gemmcompare.results import Status
from gpu_expectations import mismatches, run_rows

pytestmark = pytest.mark.gpu

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "byo_kernel" / "grouped.yaml"
F32OUT, BF16OUT = "bf16_f32acc_tn", "bf16_bf16out_f32acc_tn"
LISTED, ROUTED = "g8 n256 k512 m64,0,5,130,12,200,1,96", "g32 n512 k1024 t256 top4 zipf1.2 s2"
MASKED = "g4 n256 k512 m64,0,5,130 masked c256"

# (implementation, contract) -> (status, words in the reason): each for every problem, or by problem
EXPECTED = {
    ("library.torch_grouped_mm", F32OUT): (Status.SKIP, "output dtype must match"),  # torch refuses out_dtype
    ("library.torch_grouped_mm", BF16OUT): (Status.PASS, ""),
    ("library.cublas_loop", F32OUT): (Status.PASS, ""),
    ("library.cublas_loop", BF16OUT): (Status.PASS, ""),
    ("library.triton_grouped", F32OUT): (Status.PASS, ""),
    ("library.triton_grouped", BF16OUT): (Status.PASS, ""),
    ("library.cublas_grouped", BF16OUT): ({LISTED: Status.PASS, ROUTED: Status.PASS, MASKED: Status.SKIP},
                                          {LISTED: "", ROUTED: "", MASKED: "contiguous layout"}),
    ("library.cublas_grouped", F32OUT): (Status.SKIP, "writes its input type"),
    ("python.grouped_mm_bf16out", BF16OUT): (Status.PASS, ""),
    ("python.skips_small", F32OUT): (Status.FAIL, {LISTED: "3 of 8 groups fail (group 2, 4, 6)", ROUTED: "groups fail",
                                                   MASKED: "1 of 4 groups fail (group 2)"}),
    ("python.writes_past", F32OUT): (Status.FAIL, {LISTED: "groups fail (group 2,", ROUTED: "groups fail",
                                                   MASKED: "padding elements written"}),
    ("python.ignores_last", F32OUT): (Status.FAIL, {LISTED: "1 of 8 groups fail (group 7)",
                                                    ROUTED: "1 of 32 groups fail (group 31)",
                                                    MASKED: "1 of 4 groups fail (group 3)"}),
    ("python.fp16_accumulation", F32OUT): (Status.FAIL, "1 of "),
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_rows(SPEC, tmp_path_factory.mktemp("grouped"))


def test_grouped_rows_pass_and_planted_ones_fail(rows):
    problems = mismatches(rows, EXPECTED, (LISTED, ROUTED, MASKED))
    assert not problems, "\n".join(problems)


def test_grouped_rows_count_the_real_groups_work(rows):
    row = rows[("library.torch_grouped_mm", BF16OUT, LISTED)]
    ms = (64, 0, 5, 130, 12, 200, 1, 96)
    assert row.m == sum(ms) and row.flops == 2 * sum(ms) * 256 * 512 and row.grouped["ms"] == list(ms)
    assert row.tflops and abs(row.tflops - row.flops / (row.median_ms * 1e-3) / 1e12) < 1e-6 * row.tflops
    masked = rows[("library.torch_grouped_mm", BF16OUT, MASKED)]
    assert masked.executed_flops == 2 * 4 * 256 * 256 * 512 and masked.flops == 2 * 199 * 256 * 512
    loop = rows[("library.cublas_loop", BF16OUT, LISTED)]
    assert loop.pct_of_baseline is not None and loop.baseline == "library.torch_grouped_mm"
