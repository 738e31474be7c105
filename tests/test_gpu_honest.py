"""Issue 14 on a CUDA device: every timing method against a kernel of known duration, CUPTI beside events on a
short cuBLAS launch, and both storage policies end to end (GPU)."""

import statistics

import pytest

from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import parse_spec

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def spin():
    from gemmcompare.profilers.spin import load_spin

    return load_spin()


@pytest.mark.parametrize("graph", [False, True])
def test_every_method_times_the_spin_kernel_within_2_percent_plus_a_fixed_intercept(spin, graph):
    from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings

    medians = {}
    for ns in (20_000, 100_000, 1_000_000):
        timer = Timer(TimingSettings(l2="warm", method="auto", min_samples=30, max_samples=60, graph=graph), 0)
        m = timer.measure([Launcher("spin", spin.launcher(ns))])["spin"]
        spun, _step = spin.last()
        assert abs(spun - ns) <= 0.01 * ns  # the kernel spun what it was asked to
        assert m.cupti_samples_ms and all(x is not None for x in m.cupti_samples_ms), m.method_note
        medians[ns] = (statistics.median(m.event_samples_ms), statistics.median(m.cupti_samples_ms))
    for which, limit_ms in ((0, 0.010), (1, 0.002)):  # intercept: events < 10 us, CUPTI < 2 us
        intercept = medians[20_000][which] - 20_000e-6
        assert -0.0005 < intercept < limit_ms, (which, medians)
        for ns, pair in medians.items():
            assert abs(pair[which] - intercept - ns * 1e-6) <= 0.02 * ns * 1e-6, (which, ns, medians)


def test_cupti_reads_a_short_cublas_launch_without_the_event_pairs_cost(tmp_path):
    spec = """\
name: short
problems: [{m: 1024, n: 1024, k: 1024}]
contracts: [f16_f32acc_tn]
implementations: [library.cublas]
correctness: {fixtures: [uniform]}
timing: {l2: flush, samples: {min: 30, max: 60}}
"""
    out = Runner(parse_spec(spec, "short.yaml"), RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs",
                                                           progress=False)).run()
    (row,) = out.rows
    assert row.status is Status.PASS and row.timing_method == "cupti", row.notes
    assert row.timing["cupti_median_ms"] < row.timing["event_median_ms"]
    # the figure is CUPTI's span plus the GPU's launch window (launch_window.py), the raw span kept beside it
    window = row.timing["launch_window_ms"]
    assert window >= 0 and "launch window" in row.timing["launch_window"]
    assert row.median_ms == pytest.approx(row.timing["cupti_median_ms"] + window, rel=1e-3)
    assert row.median_ms < row.timing["event_median_ms"]
    assert row.sm_clock_mhz and row.max_sm_clock_mhz and row.median_ms_at_max_clock <= row.median_ms * 1.0001


def test_both_storage_policies_end_to_end_with_a_kernel_that_pads(tmp_path):
    spec = """\
name: storage
problems: [{m: 257, n: 263, k: 251}]
contracts: [f16_f32acc_tt, f16_f32acc_tt_aligned]
implementations: [library.cublas, library.torch_matmul, lab.wmma_padded, mma_sync: {layout: tt}]
baseline: library.cublas
correctness: {fixtures: [uniform, exact_integers]}
timing: {l2: flush, samples: {min: 10, max: 20}}
"""
    out = Runner(parse_spec(spec, "storage.yaml"), RunOptions(store=tmp_path / "g.db", runs_dir=tmp_path / "runs",
                                                             progress=False)).run()
    bad = [f"{r.contract} {r.implementation}: {r.status.value} {r.reason}" for r in out.rows
           if r.status is not Status.PASS]
    assert not bad, "\n".join(bad)
    by = {(r.contract, r.implementation): r for r in out.rows}
    tight, aligned = by[("f16_f32acc_tt", "library.cublas")], by[("f16_f32acc_tt_aligned", "library.cublas")]
    assert (tight.storage, tight.lda, tight.ldb, tight.ldc) == ("tight", 251, 263, 263)
    assert (aligned.storage, aligned.lda, aligned.ldb, aligned.ldc) == ("aligned", 256, 264, 264)
    padded = by[("f16_f32acc_tt", "lab.wmma_padded")]
    assert "inside the timed region" in padded.notes and padded.executed_flops == 2 * 272 * 272 * 256
    assert all(r.lda == aligned.lda for (c, _), r in by.items() if c == "f16_f32acc_tt_aligned")
