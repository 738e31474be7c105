"""Integrity tooling on the CPU: sanitizer and ncu output parsing, narrowing a spec, planted-spec validity."""

from pathlib import Path

import pytest

from gemmcompare.cli import main
from gemmcompare.plan import narrow
from gemmcompare.errors import GemmCompareError
from gemmcompare.profilers.ncu import ncu_launch_times, parse_stall_csv
from gemmcompare.profilers.sanitizer import parse_sanitizer
from gemmcompare.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at planted_kernel(const __half *, const __half *, float *, int, int, int, int, int, int)+0x5a0
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f0000000000 is out of bounds
========= ERROR SUMMARY: 1 error
"""

RACECHECK = """\
========= Error: Race reported between Write access at gc::lab::shared_kernel(float const*, float*)+0x1c0
=========     and Read access at gc::lab::shared_kernel(float const*, float*)+0x210 [64 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
========= ERROR SUMMARY: 1 error
"""


def test_memcheck_output_names_the_kernel():
    count, errors = parse_sanitizer(MEMCHECK)
    assert count == 1 and errors[0]["kernel"] == "planted_kernel"
    assert errors[0]["what"].startswith("Invalid __global__ write")


def test_racecheck_output_names_the_kernel():
    count, errors = parse_sanitizer(RACECHECK)
    assert count == 1 and errors[0]["kernel"] == "shared_kernel"


def test_racecheck_summary_form():
    assert parse_sanitizer("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n")[0] == 0
    assert parse_sanitizer("========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n")[0] == 2


def test_clean_run():
    assert parse_sanitizer("========= ERROR SUMMARY: 0 errors\n") == (0, [])


def test_ncu_csv_grouped_per_launch():
    head = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    rows = "".join(f'"{i}","k{i % 2}","gpu__time_duration.sum","usecond","{v}"\n'
                   for i, v in enumerate([100.0, 5.0, 102.0, 5.0, 98.0, 5.0]))
    assert ncu_launch_times(head + rows, 3) == pytest.approx([0.105, 0.107, 0.103])


def test_ncu_raw_page_gives_kernel_and_sorted_stalls():
    cols = ["ID", "Kernel Name", "launch__registers_per_thread",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_barrier_not_issued_per_issue_active.ratio"]
    text = ("==PROF== Connected to process\n" + ",".join(f'"{c}"' for c in cols) + "\n"
            + '"","","register/thread","%","inst","inst","inst","inst"\n'
            + '"0","sm90_xmma_gemm_f16f16_f32f32_tn","168","71.5","0.30","1.25","2.5","0.1"\n')
    (k,) = parse_stall_csv(text)
    assert k["kernel"] == "sm90_xmma_gemm_f16f16_f32f32_tn"
    assert k["registers"] == 168 and k["tensor_pipe_pct"] == 71.5
    assert list(k["stalls"]) == ["math_pipe_throttle", "long_scoreboard", "barrier"]  # largest first, no *_not_issued
    assert parse_stall_csv("==ERROR== no kernels were profiled\n") == []


def test_narrow_shapes_check_only_and_only():
    exp = narrow(load_spec(ROOT / "experiments" / "quickstart.yaml"), "31x29x37,8x8x8", True, "cublas")
    assert [e.label for e in exp.problems] == ["31x29x37", "8x8x8"]
    assert not any(e.time for e in exp.problems)
    assert [i.name for i in exp.implementations] == ["library.cublas"]
    with pytest.raises(GemmCompareError):
        narrow(exp, "31x29", False, None)
    with pytest.raises(GemmCompareError):
        narrow(exp, None, False, "nothing-matches")


def test_planted_spec_is_valid():
    exp = load_spec(ROOT / "tests" / "planted" / "planted.yaml")
    assert len(exp.implementations) == 11


def test_run_without_device_exits_3(tmp_path, capsys):
    # a spec whose implementations need no build: validation, then the plain no-device message
    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [f16_f16out_f32acc_tn]\n"
                    "implementations: [library.torch_matmul]\n")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a device is present")
    assert main(["run", str(spec), "--store", str(tmp_path / "g.db"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "no CUDA device is present" in err
    assert f"gemmcompare analyze {spec} --device h200" in err  # where to go without a GPU


def test_invalid_spec_exits_2(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nproblems: [{m: 0, n: 8, k: 8}]\ncontracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n")
    assert main(["validate", str(spec)]) == 2
    assert main(["run", str(spec)]) == 2


def test_narrowing_changes_the_spec_hash():
    exp = load_spec(ROOT / "experiments" / "quickstart.yaml")
    assert narrow(exp, None, False, None).spec_hash == exp.spec_hash
    hashes = {narrow(exp, "8x8x8", False, None).spec_hash, narrow(exp, None, True, None).spec_hash,
              narrow(exp, None, False, "cublas").spec_hash}
    assert len(hashes) == 3 and exp.spec_hash not in hashes


def test_every_ncu_run_leaves_the_clocks_alone(monkeypatch):
    """Both profiles launch ncu with --clock-control none (ncu locks clocks to base by default, and
    nothing here may change the GPU's clocks), and read the CSV ncu wrote to its log file."""
    import types

    from gemmcompare.profilers import ncu

    seen = []

    def fake_run(cmd, capture_output, text, timeout):
        seen.append(cmd)
        if "--log-file" not in cmd:  # the timing process, never under ncu
            return types.SimpleNamespace(stdout='{"event_median_ms": 0.1, "cupti_median_ms": 0.099}\n',
                                         stderr="", returncode=0)
        log = cmd[cmd.index("--log-file") + 1]
        if "--page" in cmd:
            Path(log).write_text('"ID","Kernel Name","launch__registers_per_thread"\n"","","reg"\n"0","k","96"\n')
        else:
            Path(log).write_text('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                 + "".join(f'"{i}","k","gpu__time_duration.sum","usecond","{v}"\n'
                                           for i, v in enumerate([100.0, 101.0])))
        return types.SimpleNamespace(stdout="{}\n", stderr="", returncode=0)

    monkeypatch.setattr(ncu.subprocess, "run", fake_run)
    timing = ncu.timing_profile("ncu", "s.yaml", "impl", "8x8x8", "f16_f32acc_tn", 2, 10)
    (kernel,) = ncu.stall_profile("ncu", "s.yaml", "impl", "8x8x8", "f16_f32acc_tn", 10)
    assert timing["ncu_ms"] == pytest.approx([0.1, 0.101]) and timing["event_over_ncu"] == pytest.approx(0.1 / 0.1005)
    assert kernel["registers"] == 96
    assert timing["cupti_over_ncu"] == pytest.approx(0.099 / 0.1005)
    timing_run, ncu_timing_run, stall_run = seen
    # timed in a process of its own (ncu intercepts every launch), profiled without a timing pass
    assert "ncu" not in timing_run and timing_run[-1] == "--timing-only"
    for cmd in (ncu_timing_run, stall_run):
        assert cmd[cmd.index("--clock-control") + 1] == "none" and cmd[-1] == "--no-timing"
    assert stall_run[-2] == "1"  # the stall run: one launch
    assert timing["l2"] == "flush" and "--cache-control" not in stall_run  # ncu's default: flush before replays
    seen.clear()
    warm = ncu.timing_profile("ncu", "s.yaml", "impl", "8x8x8", "f16_f32acc_tn", 2, 10, "warm")
    ncu.stall_profile("ncu", "s.yaml", "impl", "8x8x8", "f16_f32acc_tn", 10, "warm")
    assert warm["l2"] == "warm" and seen[2][seen[2].index("--cache-control") + 1] == "none"


@pytest.mark.parametrize("policy, expected", [
    ("flush", ["flush", "start", "launch", "stop"]), ("evict", ["flush", "start", "launch", "stop"]),
    ("rotate", ["flush", "start", "launch", "stop"]),
    ("warm", ["launch", "start", "launch", "stop"]),
])
def test_profiled_launches_meet_l2_as_the_specs_policy_leaves_it(policy, expected):
    """ncu must time the cache state the harness times: a warm spec's profiled launch follows an unprofiled one
    (no flush), a flushed one follows a flush (ncu 7.46 us against the harness's warm 6.46 us at 1024^3 before)."""
    from gemmcompare.profilers.driver import ncu_l2, profiled_launches

    calls = []
    profiled_launches(lambda: calls.append("launch"), 3, ncu_l2(policy), flush=lambda: calls.append("flush"),
                      start=lambda: calls.append("start"), stop=lambda: calls.append("stop"), wait=lambda what: None)
    assert calls == expected * 3
