"""Python rows on the GPU: planted callables (each defect caught, the run goes on), the worked example,
and the built-in Triton and torch.compile rows under the capstone contract and a scaled one."""

from pathlib import Path

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec
from gpu_expectations import assert_complete

pytestmark = pytest.mark.gpu

PLANTED = Path(__file__).resolve().parent / "planted" / "python" / "planted_python.yaml"
TN, SCALED = "f16_f32acc_tn", "f16_scaled_tn"

# (implementation, contract) -> (status, words in the reason)
EXPECTED = {
    ("library.cublas", TN): (Status.PASS, ""),
    ("python.correct", TN): (Status.PASS, ""),
    ("python.correct_direct[capture=never]", TN): (Status.PASS, ""),
    ("python.polls", TN): (Status.PASS, ""),
    ("python.syncs", TN): (Status.CRASH, "every batch starved"),  # each call waits for the GPU: no sample
    ("python.raises", TN): (Status.CRASH, "ValueError: no scale for a 257-row matrix"),
    ("python.other_stream", TN): (Status.FAIL, ""),
    ("python.writes_input", TN): (Status.FAIL, "wrote into its input matrices"),
    ("python.cached", TN): (Status.FAIL, ""),
    ("python.returns_new", TN): (Status.CRASH, "returned a new tensor"),
    ("python.scaled", TN): (Status.PASS, ""),
    ("python.my_triton_gemm", TN): (Status.PASS, ""),
    ("library.triton_matmul", TN): (Status.PASS, ""),
    ("library.torch_compile", TN): (Status.PASS, ""),
    ("library.torch_matmul", TN): (Status.PASS, ""),  # after writes_input: the inputs were restored
    ("library.cublas", SCALED): (Status.PASS, ""),
    ("python.scaled", SCALED): (Status.PASS, ""),
    ("library.triton_matmul", SCALED): (Status.PASS, ""),
    ("library.torch_compile", SCALED): (Status.PASS, ""),
    ("python.correct", SCALED): (Status.SKIP, "alpha_beta: true"),
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("python")
    out = Runner(load_spec(PLANTED), RunOptions(store=tmp / "g.db", runs_dir=tmp / "runs", progress=False)).run()
    assert_complete(out)
    return {(r.implementation, r.contract): r for r in out.rows}


def test_every_planted_defect_is_caught_and_the_rest_pass(rows):
    problems = []
    for key, (status, words) in EXPECTED.items():
        row = rows.get(key)
        if row is None or row.status is not status or words not in row.reason:
            problems.append(f"{key}: expected {status.value} ({words!r}), got "
                            f"{row.status.value if row else 'no row'}: {row.reason if row else ''}")
    assert not problems, "\n".join(problems)


def test_an_exception_is_told_by_the_users_frame(rows):
    reason = rows[("python.raises", TN)].reason
    assert "kernels.py:" in reason and "in _scale_for" in reason


def test_the_row_says_how_it_was_timed(rows):
    graph, fallback = rows[("python.correct", TN)], rows[("python.polls", TN)]
    asked = rows[("python.correct_direct[capture=never]", TN)]
    assert graph.timing["launch"] == "cuda_graph" and "replays of a CUDA graph" in graph.notes
    assert fallback.timing["launch"] == "direct" and "polls()" in fallback.timing["direct_because"]
    assert asked.timing["launch"] == "direct" and asked.timing["direct_because"] == "capture: never"
    for row in (fallback, asked):
        assert "timed as direct calls" in row.notes
    for row in (graph, fallback, asked):
        assert row.build_seconds is not None and row.timing["first_call_s"] == row.build_seconds


def test_triton_row_records_its_chosen_configuration(rows):
    for contract in (TN, SCALED):
        row = rows[("library.triton_matmul", contract)]
        assert "BLOCK_M=" in row.timing["triton_config"] and "chose BLOCK_M=" in row.notes
        assert row.timing["autotune_s"] == row.build_seconds > 0


def test_torch_compile_row_records_compile_time_and_what_runs(rows):
    plain, scaled = rows[("library.torch_compile", TN)], rows[("library.torch_compile", SCALED)]
    assert plain.timing["compiled"] == "torch.mm(a, b, out_dtype=torch.float32)"
    assert scaled.timing["compiled"].endswith("* c0")
    for row in (plain, scaled):
        assert row.timing["compile_s"] == row.build_seconds > 0
        assert row.timing["inductor_kernels"] != "no kernel identified in inductor's code"
        assert row.median_ms and row.median_ms < 1.0  # device time of one small GEMM, not the compile
