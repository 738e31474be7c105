"""End-to-end on a CUDA device: the runner, the store, and planted bad implementations (GPU)."""

import dataclasses

import pytest
import torch

from gemmcompare.implementations.base import Implementation, Ok, Prepared
from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec
from gemmcompare.store import Store
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

SPEC = """\
name: gpu-smoke
problems:
  - {m: 257, n: 263, k: 251}
  - {m: 512, n: 512, k: 512}
contracts: [f16_f32acc_tn, f32_strict_tn]
implementations: [library.cublas, library.torch_matmul]
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers, adversarial]}
timing: {l2: flush, samples: {min: 10, max: 30}}
"""


class _Planted(Implementation):
    """A torch-computed GEMM with a planted defect."""

    family = "planted"

    def __init__(self, defect):
        super().__init__(defect)
        self.defect = defect

    def supports(self, problem, contract):
        return Ok()

    def prepare(self, problem, contract, operands, extension):
        return _PlantedPrepared(self.defect, operands, contract)


class _PlantedPrepared(Prepared):
    def __init__(self, defect, operands, contract):
        self.defect, self.a, self.b = defect, operands.a, operands.b
        self.out = torch.empty(self.a.shape[0], self.b.shape[1], dtype=torch.float32, device="cuda")
        self.calls = 0

    def launch(self):
        self.calls += 1
        if self.defect == "zeros":
            self.out.zero_()
            return
        full = self.a.float() @ self.b.float()
        if self.defect == "skip_last_column":
            self.out[:, :-1] = full[:, :-1]
        elif self.defect == "wrong_after_two":  # right for the two checking launches, then wrong:
            self.out.copy_(full if self.calls <= 2 else full + 1.0)  # only the timed re-check can see it
        else:
            self.out.copy_(full)

    def poison(self):
        self.out.fill_(float("nan"))

    def output(self):
        return self.out


def run(tmp_path, spec=SPEC, extra=()):
    exp = parse_spec(spec, "gpu-smoke.yaml")
    if extra:
        exp = dataclasses.replace(exp, implementations=exp.implementations + tuple(extra))
    opts = RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)
    return Runner(exp, opts).run()


def test_quickstart_rows_pass_and_are_stored(tmp_path):
    out = run(tmp_path)
    assert_complete(out)
    by = {(r.problem, r.contract, r.implementation): r for r in out.rows}
    assert by[("512x512x512", "f16_f32acc_tn", "library.cublas")].status is Status.PASS
    # torch.mm under FP32 output: PASS through out_dtype, or a SKIP that says why
    tm = by[("512x512x512", "f16_f32acc_tn", "library.torch_matmul")]
    assert tm.status in (Status.PASS, Status.SKIP)
    for r in out.rows:
        if r.status is Status.PASS:
            assert r.median_ms > 0 and len(r.samples_ms) >= 10 and r.tflops > 0
            assert r.pct_of_baseline is not None
    df = Store(tmp_path / "g.db").results(out.run_id)
    assert len(df) == len(out.rows) == 8
    assert (out.run_dir / "results.csv").exists() and (out.run_dir / "results.json").exists()


def test_planted_defects_fail(tmp_path):
    spec = SPEC.replace("[f16_f32acc_tn, f32_strict_tn]", "[f32_strict_tt]")
    out = run(tmp_path, spec, [_Planted("zeros"), _Planted("skip_last_column"), _Planted("wrong_after_two"), _Planted("none")])
    by = {(r.problem, r.implementation): r for r in out.rows}
    for prob in ("257x263x251", "512x512x512"):
        assert by[(prob, "planted.zeros")].status is Status.FAIL
        assert by[(prob, "planted.skip_last_column")].status is Status.FAIL
        assert "non-finite" in by[(prob, "planted.skip_last_column")].reason
        assert by[(prob, "planted.wrong_after_two")].status is Status.FAIL
        assert "last timed launch" in by[(prob, "planted.wrong_after_two")].reason
        assert by[(prob, "planted.none")].status is Status.PASS
