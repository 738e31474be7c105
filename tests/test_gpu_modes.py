"""Timing modes, L2 policies, storage orders, alpha/beta and C column-major through cuBLAS and torch.mm (GPU)."""

import pytest

from gemmcompare.results import Status
from gemmcompare.run.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec

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


@pytest.mark.parametrize("l2,graph", [("rotate", "true"), ("warm", "false"), ("flush", "true")])
def test_every_layout_and_mode_passes_or_skips_with_a_reason(tmp_path, l2, graph):
    exp = parse_spec(SPEC.replace("L2POLICY", l2).replace("GRAPH", graph), "modes.yaml")
    out = Runner(exp, RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    assert out.status == "complete"
    bad = [f"{r.problem} {r.contract} {r.implementation}: {r.status.value} {r.reason}" for r in out.rows
           if r.status not in (Status.PASS, Status.SKIP)
           or (r.status is Status.SKIP and (r.implementation == "library.cublas" or not r.reason))]
    assert not bad, "\n".join(bad)
    timed = [r for r in out.rows if r.status is Status.PASS]
    assert all(r.median_ms > 0 and r.timing["l2_policy"] == l2 for r in timed)
    if l2 == "rotate":
        assert any(r.timing["rotation_copies"] > 1 for r in timed)  # small problems: several input copies
