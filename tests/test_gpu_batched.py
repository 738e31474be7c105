"""Batched problems on the GPU (experiments/byo_kernel/batched.yaml): cuBLAS's strided-batched GEMM, torch.bmm, the
Triton GEMM, the mma_sync step, a CUTLASS SM90 kernel (the batch as its L mode; on an H100/H200), a batched
general-ABI kernel and Python callables PASS every matrix of batch 8 of 512^3 and batch 3 of 1000x1000x256 under
FP16 and BF16 contracts; the planted callables (matrix 0 only, the last matrix skipped, matrices swapped) FAIL."""

from pathlib import Path

import pytest

from gemmcompare.results import Status
from gpu_expectations import mismatches, run_rows

pytestmark = pytest.mark.gpu

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "byo_kernel" / "batched.yaml"
F16, BF16 = "f16_f32acc_tn", "bf16_bf16out_f32acc_tn"
PROBLEMS = ("512x512x512x8", "1000x1000x256x3")
MMA = "mma_sync[acc=f32,block=128x256x64,epilogue=plain,group=8,layout=tn,mma=m16n8k16,smem=swizzle,stages=3,warp_tile=64x64,warps=8]"

# (implementation, contract) -> (status, words in the reason), for every problem
EXPECTED = {
    ("library.cublas", F16): (Status.PASS, ""),
    ("library.cublas", BF16): (Status.PASS, ""),
    ("library.torch_matmul", F16): (Status.PASS, ""),
    ("library.torch_matmul", BF16): (Status.PASS, ""),
    ("library.triton_matmul", F16): (Status.PASS, ""),
    ("library.triton_matmul", BF16): (Status.PASS, ""),
    (MMA, F16): (Status.PASS, ""),
    (MMA, BF16): (Status.PASS, ""),
    ("cutlass.cutlass3x_sm90_tensorop_f16_f32_f32_128x256x64_1x1x1_coop_epitma_stauto_persistent_tn_align8_rasterH_swz1",
     F16): (Status.PASS, ""),
    ("cutlass.cutlass3x_sm90_tensorop_bf16_bf16_f32_128x256x64_1x1x1_coop_epitma_stauto_persistent_tn_align8_rasterH_swz1",
     BF16): (Status.PASS, ""),
    ("custom.my_batched_gemm", F16): (Status.PASS, ""),
    ("python.bmm_f16", F16): (Status.PASS, ""),
    ("python.bmm_bf16", BF16): (Status.PASS, ""),
    ("python.first_only", F16): (Status.FAIL, "batch index 1, 2"),
    ("python.skips_last", F16): (Status.FAIL, "1 of "),
    ("python.swaps", F16): (Status.FAIL, "matrices fail"),
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_rows(SPEC, tmp_path_factory.mktemp("batched"))


def test_batched_rows_pass_and_planted_ones_fail(rows):
    problems = mismatches(rows, EXPECTED, PROBLEMS)
    assert not problems, "\n".join(problems)


def test_batched_rows_count_the_batch_in_their_work(rows):
    row = rows[("library.cublas", F16, "512x512x512x8")]
    assert row.batch == 8 and row.tflops and row.median_ms
    assert abs(row.tflops - 2 * 512**3 * 8 / (row.median_ms * 1e-3) / 1e12) < 1e-6 * row.tflops
