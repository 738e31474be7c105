"""A user's own grouped FP8 kernel on the GPU (Hopper, or Ada), through the harness: the grouped FP8 starter
(`gemmcompare new-kernel NAME --abi general --grouped --fp8`) PASSes every group under 1x128 / 128x128 block scales
beside the loop of cuBLASLt's calls; planted copies of it FAIL: one that reads group 0's scale_b for every group,
one that skips the groups of fewer than 16 tokens, one that keeps the tensor core's habit of summing all of K before
scaling (the k blocks' scales applied to the whole sum at the last block's). So the C ABI's grouped scales
(scale_a with A's stacked rows, scale_b [groups, kb, nb]) reach an own kernel as gemm_abi.h says.

On an H100 at 1969e37 (experiments/studies/gpu-tests/h100/grouped-fp8-1969e37/) the starter PASSed and two plants
FAILed, but the one that reads group 0's scale_b PASSed: under uniform data every 128x128 block's amax is about 1,
so every group's block scales were about 1/448. The runner now adds the fp8_scales fixture to grouped FP8 problems
(each group's and block's scales of their own magnitude), under which it FAILs (tests/test_fp8_scales_fixture.py
on the CPU), and on an H100 at 4e87cbd all three plants FAIL and the starter PASSes
(experiments/studies/gpu-tests/h100/fp8-scales-4e87cbd/)."""

from __future__ import annotations

import pytest

from gemmcompare.cli import main
from gemmcompare.results import Status
from gemmcompare.runner import parent
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

BLOCK = "e4m3_bf16out_f32acc_tn_block"
PLANTS = {  # name -> (the text replaced in the starter, its replacement)
    "group0_scales": ("lo * kblocks * nblocks + col / kBlockK", "col / kBlockK"),
    "skips_small": ("if (row >= args.m || col >= args.n) return;",
                    "if (row >= args.m || col >= args.n) return;\n"
                    "  for (int64_t g = 0; g < args.groups; ++g)  // planted: groups under 16 rows left alone\n"
                    "    if (args.group_offsets[g] <= row && row < args.group_offsets[g + 1] &&\n"
                    "        args.group_offsets[g + 1] - args.group_offsets[g] < 16) return;"),
    "scales_once": ("total += partial * args.scale_a[row * kblocks + kb] * scale_b[kb * nblocks];",
                    "total += partial;\n    if (kb == kblocks - 1) total *= args.scale_a[row * kblocks + kb] * "
                    "scale_b[kb * nblocks];"),
}
SPEC = """\
name: grouped_fp8_own_gpu
problems:
  - grouped: {n: 256, k: 512, m: [64, 0, 5, 130, 12, 200, 1, 96]}
  - grouped: {n: 512, k: 1024, routing: {tokens: 256, top_k: 4, experts: 32, distribution: {zipf: 1.2}, seed: 2}}
contracts: [BLOCK]
implementations:
  - library.cublaslt_fp8_loop
ENTRIES
baseline: library.cublaslt_fp8_loop
correctness: {fixtures: [uniform]}   # + fp8_accumulation (every FP8 contract) and fp8_scales (grouped)
timing: {l2: flush, samples: {min: 10, max: 30}, row_timeout_s: 60}
""".replace("BLOCK", BLOCK)


def _entry(name: str) -> str:
    return (f"  - custom: {{name: {name}, sources: [{name}.cu], entry: {name}, abi: general, contract: {BLOCK}, "
            f"arch: sm_89, grouped: true, scalings: [block]}}\n")


def test_an_own_grouped_fp8_kernel_passes_and_its_planted_copies_fail(tmp_path):
    for name in ("mine", *PLANTS):  # each its own starter (the name is the entry's symbol), then planted
        assert main(["new-kernel", name, "--abi", "general", "--grouped", "--fp8", "--dir", str(tmp_path)]) == 0
    for plant, (old, new) in PLANTS.items():
        source = tmp_path / f"{plant}.cu"
        assert old in source.read_text(), plant  # the starter still has what the plant replaces
        source.write_text(source.read_text().replace(old, new))
    spec = SPEC.replace("ENTRIES", "".join(_entry(n) for n in ("mine", *PLANTS)).rstrip("\n"))
    out = parent.Runner(parse_spec(spec, str(tmp_path / "grouped_fp8_own_gpu.yaml"), base_dir=tmp_path),
                        parent.RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False,
                                          cache_dir=tmp_path / "cache")).run()
    assert_complete(out)
    wrong = []
    for r in out.rows:
        want = Status.FAIL if r.implementation.removeprefix("custom.") in PLANTS else Status.PASS
        if r.status is not want:
            wrong.append(f"{r.implementation} {r.problem}: expected {want.value}, got {r.status.value} {r.reason}")
    assert not wrong, "\n".join(wrong)
