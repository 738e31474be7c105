"""The GPU tests' specs, read and planned without a GPU: a GPU test whose spec cannot be read (an unknown fixture,
a misspelt key) fails before any row runs, and device time is scarce, so that is caught here. Where a GPU test
lists what it expects of each row (EXPECTED, through gpu_expectations.py), a row it expects to SKIP must be
planned SKIP with those words, and a row it expects to run must not be planned SKIP: the part of its verdicts that
needs no GPU."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from gemmcompare.plan import make_plan
from gemmcompare.results import Status
from gemmcompare.spec import load_spec, parse_spec
from gemmcompare.errors import SpecError

TESTS = Path(__file__).resolve().parent
GPU_TESTS = sorted(p.stem for p in TESTS.glob("test_gpu_*.py") if "\nSPEC = " in p.read_text())


# a GPU test whose SPEC is a template: the values it fills in (its own test fills each in turn)
FILLS = {"test_gpu_modes": {"L2POLICY": "flush", "GRAPH": "false"},
         # its own entries are written by its test (the grouped FP8 starter and planted copies): any valid row here
         "test_gpu_grouped_fp8_own": {"ENTRIES": "  - hopper.grouped_fp8"}}
# a GPU test whose SPEC names files relative to a folder other than the working directory
BASE_DIRS = {"test_gpu_fp8_own": TESTS.parent / "experiments" / "byo_kernel"}


def experiment_of(module):
    spec = module.SPEC
    if isinstance(spec, Path):
        return load_spec(spec)
    for key, value in FILLS.get(module.__name__, {}).items():
        spec = spec.replace(key, value)
    return parse_spec(spec, f"{module.__name__}.yaml", base_dir=BASE_DIRS.get(module.__name__))


@pytest.mark.parametrize("name", GPU_TESTS)
def test_a_gpu_tests_spec_reads_and_plans(name):
    module = importlib.import_module(name)
    try:
        exp = experiment_of(module)
    except SpecError as e:
        pytest.fail(f"{name}: its SPEC is not a valid spec: {e}")
    plan = make_plan(exp)
    assert plan.cells, name


def test_there_are_gpu_test_specs_to_read():
    assert {"test_gpu_grouped", "test_gpu_batched", "test_gpu_cute_sm90", "test_gpu_grouped_fp8"} <= set(GPU_TESTS)


def _shared_expectations(name: str) -> bool:
    """The module states its rows in gpu_expectations.py's form: (implementation, contract) -> (status, words)."""
    module = importlib.import_module(name)
    return hasattr(module, "EXPECTED") and hasattr(module, "mismatches")


@pytest.mark.parametrize("name", [n for n in GPU_TESTS if _shared_expectations(n)])
def test_expected_skips_are_planned_and_expected_runs_are_not(name):
    module = importlib.import_module(name)
    exp = experiment_of(module)
    planned = {(c.implementation.name, c.contract.name, c.entry.problem.label): c.support for c in make_plan(exp).cells}
    problems = sorted({label for _, _, label in planned})
    wrong = []
    for (impl, contract), (status, words) in module.EXPECTED.items():
        for problem in problems:
            state = status if isinstance(status, Status) else status[problem]
            want = words if isinstance(words, str) else words[problem]
            support = planned.get((impl, contract, problem))
            if support is None:
                wrong.append(f"{impl} {contract} {problem}: not planned")
            elif state is Status.SKIP and (support or want not in support.reason):
                wrong.append(f"{impl} {contract} {problem}: expected SKIP ({want!r}), planned {support!r}")
            elif state is not Status.SKIP and not support:
                wrong.append(f"{impl} {contract} {problem}: expected {state.value}, planned SKIP: {support.reason}")
    assert not wrong, "\n".join(wrong)


def test_an_incomplete_run_says_why_in_the_assertion():
    """gpu_expectations.assert_complete: a GPU test's log alone names the rows that broke a run."""
    from types import SimpleNamespace

    from gemmcompare.results import Result
    from gpu_expectations import assert_complete

    ok = Result("r", "8x8x8", 8, 8, 8, 1, "c", "library.cublas", "library", {}, Status.PASS)
    crash = Result("r", "8x8x8", 8, 8, 8, 1, "c", "cutlass.x", "cutlass", {}, Status.CRASH, reason="illegal address")
    assert_complete(SimpleNamespace(status="complete", rows=[ok, crash], run_id="r", run_dir=Path("runs/r")))
    with pytest.raises(AssertionError) as e:
        assert_complete(SimpleNamespace(status="failed", rows=[ok, crash], run_id="r", run_dir=Path("runs/r")))
    text = str(e.value)
    assert "'failed'" in text and "cutlass.x | c | 8x8x8: CRASH: illegal address" in text and "cublas" not in text
