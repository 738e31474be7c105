"""Timing modes, L2 policies, storage orders, alpha/beta and C column-major through cuBLAS and torch.mm (GPU)."""

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: modes
problems:
  - {m: 257, n: 263, k: 251}
  - {m: 512, n: 384, k: 640}
contracts:
  - f16_f32acc_tn
  - f16_f32acc_nn
  - f16_f32acc_nt
  - f32_strict_tt
  - f32_tf32_tn
  - bf16_bf16out_f32acc_tn
  - f16_f16out_f32acc_tt
  - {name: scaled, a: f16, c: f32, layout: tn, alpha: 2.0, beta: 0.5}
  - {name: ccol, a: f16, c: f32, layout: nt, c_order: col}
implementations: [library.cublas, library.torch_matmul]
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: L2POLICY, graph: GRAPH, samples: {min: 10, max: 20}}
"""


@pytest.mark.parametrize("l2,graph", [("rotate", "true"), ("warm", "false"), ("flush", "true"), ("evict", "false")])
def test_every_layout_and_mode_passes_or_skips_with_a_reason(tmp_path, l2, graph):
    exp = parse_spec(SPEC.replace("L2POLICY", l2).replace("GRAPH", graph), "modes.yaml")
    out = Runner(exp, RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    assert_complete(out)
    bad = [f"{r.problem} {r.contract} {r.implementation}: {r.status.value} {r.reason}" for r in out.rows
           if r.status not in (Status.PASS, Status.SKIP)
           or (r.status is Status.SKIP and (r.implementation == "library.cublas" or not r.reason))]
    assert not bad, "\n".join(bad)
    timed = [r for r in out.rows if r.status is Status.PASS]
    assert all(r.median_ms > 0 and r.timing["l2_policy"] == l2 for r in timed)
    if l2 == "rotate":
        assert any(r.timing["rotation_copies"] > 1 for r in timed)  # small problems: several input copies


MMA_SYNC_BF16 = """\
name: mma_sync_bf16
problems:
  - {m: 257, n: 263, k: 251}
  - {m: 1024, n: 1024, k: 1024}
  - {m: 611, n: 613, k: 617}
  - {m: 256, n: 512, k: 128}
  - {m: 200, n: 136, k: 264}
contracts: [bf16_bf16out_f32acc_tn, bf16_f32acc_tn, bf16_bf16out_f32acc_tt, bf16_f32acc_tt, f16_f32acc_tn]
implementations:
  - library.cublas
  - mma_sync
  - mma_sync: {mma: m16n8k8, smem: padded, block: [128, 128, 32], warps: 4, stages: 4}
  - mma_sync: {smem: row, stages: 1, block: [64, 64, 32], warps: 4}
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: warm, samples: {min: 5, max: 10}}
"""

MMA_SYNC_BF16_BIAS_RELU = """\
name: mma_sync_bf16_bias_relu
problems:
  - {m: 257, n: 263, k: 251}
  - {m: 1024, n: 1024, k: 1024}
contracts:
  - {name: bf16_bias_relu_tn, a: bf16, c: bf16, layout: tn, epilogue: bias_relu}
  - {name: bf16_f32out_bias_relu_tt, a: bf16, c: f32, layout: tt, epilogue: bias_relu}
implementations: [mma_sync: {epilogue: bias_relu}, mma_sync: {epilogue: bias_relu, mma: m16n8k8, smem: padded}]
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: warm, samples: {min: 5, max: 10}}
"""


@pytest.mark.parametrize("spec,variants", [(MMA_SYNC_BF16, 3), (MMA_SYNC_BF16_BIAS_RELU, 2)], ids=["plain", "bias_relu"])
def test_mma_sync_runs_bf16_contracts(tmp_path, spec, variants):
    """mma_sync under BF16 contracts (bf16 or f32 out; tn and tt; both mma shapes; row/padded/swizzle; the
    aligned, whole-tile and element-wise kernels through 1024-cubed, 256x512x128 and odd shapes): every row
    PASSES, none is a SKIP (the same entries run f16_f32acc_tn beside them). 256x512x128 and 1024-cubed take
    the whole-tile kernel, 200x136x264 the aligned one with ragged tiles, K = 251 and 617 the element-wise one."""
    exp = parse_spec(spec, "mma_sync_bf16.yaml")
    out = Runner(exp, RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    assert_complete(out)
    bad = [f"{r.problem} {r.contract} {r.implementation}: {r.status.value} {r.reason}" for r in out.rows
           if r.status is not Status.PASS]
    assert not bad, "\n".join(bad)
    mma_rows = [r for r in out.rows if r.implementation.startswith("mma_sync[")]
    assert len(mma_rows) == len(exp.problems) * len(exp.contracts) * variants
