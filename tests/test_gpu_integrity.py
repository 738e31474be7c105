"""Planted defective CUDA kernels, built by the suite: each must be caught, and the run must go on (GPU)."""

from pathlib import Path

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

PLANTED = Path(__file__).resolve().parent / "planted" / "planted.yaml"

EXPECTED = {
    "library.cublas": (Status.PASS, ""),
    "custom.correct": (Status.PASS, ""),
    "custom.zeros": (Status.FAIL, "outside the bound"),
    "custom.skip_last_column": (Status.FAIL, "non-finite"),
    "custom.race": (Status.FAIL, ""),
    "custom.other_stream": (Status.FAIL, ""),
    "custom.cached": (Status.FAIL, "non-finite"),  # its second launch (the checked one) writes nothing
    "custom.illegal_address": (Status.CRASH, ""),
    "custom.trap": (Status.CRASH, ""),
    "custom.hang": (Status.TIMEOUT, ""),
    "library.torch_matmul": (Status.PASS, ""),  # after three dead workers, the run still measures
}


def test_every_planted_defect_is_caught_and_the_run_goes_on(tmp_path):
    exp = load_spec(PLANTED)
    out = Runner(exp, RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False)).run()
    got = {r.implementation: r for r in out.rows}
    assert_complete(out)
    problems = []
    for name, (status, words) in EXPECTED.items():
        row = got.get(name)
        if row is None or row.status is not status or words not in row.reason:
            problems.append(f"{name}: expected {status.value} ({words!r}), got "
                            f"{row.status.value if row else 'no row'}: {row.reason if row else ''}")
    assert not problems, "\n".join(problems)
