"""Grouped problems on the GPU (experiments/byo_kernel/grouped.yaml): torch's and Triton's grouped GEMMs, the loop
of cuBLAS calls and a grouped Python callable PASS every group of a listed problem (an empty group and groups below 16
tokens among them), a Zipf-routed one and a masked one, under BF16 contracts with FP32 and BF16 outputs; the
planted callables (short groups skipped, rows written past a group's end, the last group ignored, one group
accumulated in FP16) FAIL, naming their groups."""

from pathlib import Path

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec

pytestmark = pytest.mark.gpu

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "byo_kernel" / "grouped.yaml"
F32OUT, BF16OUT = "bf16_f32acc_tn", "bf16_bf16out_f32acc_tn"
LISTED, ROUTED = "g8 n256 k512 m64,0,5,130,12,200,1,96", "g32 n512 k1024 t256 top4 zipf1.2 s2"
MASKED = "g4 n256 k512 m64,0,5,130 masked c256"

# (implementation, contract) -> (status, words in the reason: for every problem, or by problem)
EXPECTED = {
    ("library.torch_grouped_mm", F32OUT): (Status.PASS, ""),
    ("library.torch_grouped_mm", BF16OUT): (Status.PASS, ""),
    ("library.cublas_loop", F32OUT): (Status.PASS, ""),
    ("library.cublas_loop", BF16OUT): (Status.PASS, ""),
    ("library.triton_grouped", F32OUT): (Status.PASS, ""),
    ("library.triton_grouped", BF16OUT): (Status.PASS, ""),
    ("python.grouped_mm_f32out", F32OUT): (Status.PASS, ""),
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
    tmp = tmp_path_factory.mktemp("grouped")
    out = Runner(load_spec(SPEC), RunOptions(store=tmp / "g.db", runs_dir=tmp / "runs", progress=False)).run()
    assert out.status == "complete"
    return {(r.implementation, r.contract, r.problem): r for r in out.rows}


def test_grouped_rows_pass_and_planted_ones_fail(rows):
    problems = []
    for (impl, contract), (status, words) in EXPECTED.items():
        for problem in (LISTED, ROUTED, MASKED):
            want = words if isinstance(words, str) else words[problem]
            row = rows.get((impl, contract, problem))
            if row is None or row.status is not status or want not in row.reason:
                problems.append(f"{impl} {contract} {problem}: expected {status.value} ({want!r}), got "
                                f"{row.status.value if row else 'no row'}: {row.reason if row else ''}")
    assert not problems, "\n".join(problems)


def test_grouped_rows_count_the_real_groups_work(rows):
    row = rows[("library.torch_grouped_mm", F32OUT, LISTED)]
    ms = (64, 0, 5, 130, 12, 200, 1, 96)
    assert row.m == sum(ms) and row.flops == 2 * sum(ms) * 256 * 512 and row.grouped["ms"] == list(ms)
    assert row.tflops and abs(row.tflops - row.flops / (row.median_ms * 1e-3) / 1e12) < 1e-6 * row.tflops
    masked = rows[("library.torch_grouped_mm", F32OUT, MASKED)]
    assert masked.executed_flops == 2 * 4 * 256 * 256 * 512 and masked.flops == 2 * 199 * 256 * 512
    loop = rows[("library.cublas_loop", F32OUT, LISTED)]
    assert loop.pct_of_baseline is not None and loop.baseline == "library.torch_grouped_mm"
