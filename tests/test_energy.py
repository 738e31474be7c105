"""Energy per GEMM from a fake NVML counter (contracts/energy.py, energy_meter.py): the counter read between its
update instants, across a wrap-around, a reset caught, a missing counter falling back to power samples (and the
row saying so), batches too short for the counter doubled or marked, and the CI computed as the time's."""

from __future__ import annotations

import math
import sys
import types

import pytest

from gemmcompare.contracts import energy_meter
from gemmcompare.contracts.energy import (COUNTER_MODULUS, EnergyBatch, Window, counter_delta_mj, counter_window,
                                          launches_for, poll_batch, samples_window, summarize_energy)
from gemmcompare.contracts.timing import Launcher, TimingSettings, median_ci_rel


class FakeBoard:
    """A GPU drawing `watts` while a batch of `batch_s` runs, whose energy counter (mJ, 64-bit) publishes the
    energy so far every `update_s`, starting from `start_mj`; host time advances by each sleep and by
    `read_s` per NVML read."""

    def __init__(self, watts=700.0, update_s=0.02, start_mj=10**9, batch_s=0.5, read_s=0.0001, phase_s=0.007):
        self.watts, self.update_s, self.start_mj, self.batch_s, self.read_s = watts, update_s, start_mj, batch_s, read_s
        self.t = 0.0
        self.phase_s = phase_s  # the first update falls this far into the batch

    def counter(self) -> int:
        self.t += self.read_s
        published = math.floor((self.t - self.phase_s) / self.update_s) * self.update_s + self.phase_s
        return (self.start_mj + round(self.watts * max(published, 0.0) * 1e3)) % COUNTER_MODULUS

    def power(self) -> float:
        self.t += self.read_s
        return self.watts

    def now(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s

    def running(self) -> bool:
        return self.t < self.batch_s

    def poll(self, counter=True):
        return poll_batch(self.running, self.counter if counter else None, self.power, self.now, self.sleep)


def test_counter_delta_across_the_wrap():
    assert counter_delta_mj(5, 1205) == 1200
    assert counter_delta_mj(COUNTER_MODULUS - 500, 700) == 1200


def test_the_counter_between_update_instants_gives_the_power():
    board = FakeBoard(watts=700.0, update_s=0.02, batch_s=0.5)
    w = counter_window(board.poll().counter)
    assert w.power_w == pytest.approx(700.0, rel=0.01)
    assert w.updates >= 20 and w.error <= 0.01


def test_a_wrap_around_inside_the_batch_changes_nothing():
    # the counter starts 0.1 J below 2^64 mJ: it wraps in the batch's first update
    board = FakeBoard(watts=650.0, start_mj=COUNTER_MODULUS - 100, batch_s=0.4)
    reads = board.poll().counter
    assert any(b < a for (_, a), (_, b) in zip(reads, reads[1:])), "the fake must wrap"
    assert counter_window(reads).power_w == pytest.approx(650.0, rel=0.01)


def test_a_counter_that_goes_backwards_is_a_reset_not_energy():
    reads = [(0.0, 5_000_000), (0.01, 5_000_700), (0.02, 5_001_400), (0.03, 100), (0.04, 800)]
    w = counter_window(reads)
    assert w.power_w is None and "reset" in w.reason


def test_a_batch_shorter_than_two_updates_has_no_figure():
    board = FakeBoard(update_s=0.1, batch_s=0.09)  # one update inside
    w = counter_window(board.poll().counter)
    assert w.power_w is None and w.updates == 1 and "2 are needed" in w.reason


def test_updates_too_close_for_the_poll_gaps_have_no_figure():
    # reads every 5 ms: each update is known to within 2.5 ms, too coarse for a 30 ms window
    reads = [(0.005 * i, 1000 * (i // 2)) for i in range(8)]
    w = counter_window(reads)
    assert w.power_w is None and "too short" in w.reason and w.error > 0.01


def test_no_read_after_the_batch_ended_is_kept():
    board = FakeBoard(batch_s=0.05)
    polled = board.poll()
    assert polled.counter and all(t < 0.05 for t, _ in polled.counter)


def test_power_samples_integrate_to_the_average():
    samples = [(0.0, 600.0), (0.01, 700.0), (0.02, 700.0), (0.04, 600.0)]
    # trapezoids: 6.5 + 7 + 13 = 26.5 W*10ms over 40 ms
    assert samples_window(samples).power_w == pytest.approx(662.5)
    assert samples_window(samples[:2]).power_w is None


def test_launches_for_a_minimum_batch():
    assert launches_for(0.19, 100.0, 10**6) == 527
    assert launches_for(500.0, 100.0, 10**6) == 1
    assert launches_for(1e-6, 100.0, 1000) == 1000
    with pytest.raises(ValueError, match="positive"):
        launches_for(0.0, 100.0, 10)


def _batches(values_j, launches=100, span_ms=200.0):
    return [EnergyBatch(launches, span_ms, "counter", Window(v * launches / (span_ms / 1e3), span_ms * 0.8, 8, 0.002))
            for v in values_j]


def test_summary_median_and_ci_as_the_time():
    js = [0.130, 0.131, 0.129, 0.132, 0.130, 0.128, 0.131]
    out = summarize_energy(_batches(js), flops=2 * 4096 ** 3, source="counter",
                           telemetry={"sm_clock_mhz_median": 1755.0, "throttled_fraction": 1.0})
    assert out["energy_source"] == "counter"
    assert out["energy_j_per_gemm"] == pytest.approx(0.130)
    assert out["energy_ci_rel"] == pytest.approx(median_ci_rel(sorted(out["energy_samples_j"])))
    assert math.isfinite(out["energy_ci_rel"])
    assert out["avg_power_w"] == pytest.approx(0.130 * 100 / 0.2)
    assert out["gflop_per_j"] == pytest.approx(2 * 4096 ** 3 / 0.130 / 1e9)
    assert out["energy_sm_clock_mhz"] == 1755.0 and out["energy_throttled_fraction"] == 1.0


def test_a_row_without_a_measured_batch_says_why():
    bad = [EnergyBatch(10, 1.0, "counter", Window(None, updates=0, reason="the counter updated 0 time(s)"))]
    out = summarize_energy(bad, flops=10, source="counter")
    assert out["energy_source"] == "none" and "energy_j_per_gemm" not in out
    assert "updated 0 time" in out["energy"]["reason"]
    with pytest.raises(ValueError, match="source"):
        summarize_energy(bad, flops=10, source="joulemeter")


# -- the batching rule and the fallback, through energy_meter with fake attempts and a fake pynvml ------------

class _Sim:
    """energy_meter's one attempt, simulated: a batch of run.count launches of launch_ms on a FakeBoard."""

    def __init__(self, launch_ms=0.2, update_s=0.05, counter=True, watts=lambda attempt: 700.0):
        self.launch_ms, self.update_s, self.counter, self.counts = launch_ms, update_s, counter, []
        self.watts = watts  # the board's power at each attempt (0, 1, ...)

    def __call__(self, ln, run, source, telemetry, cycles_per_ms, timeout_s):
        self.counts.append(run.count)
        span_ms = run.count * self.launch_ms
        board = FakeBoard(watts=self.watts(len(self.counts) - 1), update_s=self.update_s, batch_s=span_ms / 1e3)
        polled = board.poll(counter=source == "counter")
        by_samples = samples_window(polled.power)
        window = counter_window(polled.counter) if source == "counter" else by_samples
        return EnergyBatch(run.count, span_ms, source, window, by_samples.power_w), False, 1.0, {}


def _launcher():
    return Launcher("k", lambda: None)


def _measure_simulated(monkeypatch, sims: dict, min_batch_ms: float, batches: int = 6) -> dict:
    """measure_energy over one launcher per simulated board (named by `sims`' keys, each timed at its board's
    launch time): launcher name -> EnergyRun."""
    from gemmcompare.contracts.timing import Measurement

    monkeypatch.setattr(energy_meter, "_run_once", lambda ln, *a: sims[ln.name](ln, *a))
    tel = types.SimpleNamespace(energy_counter_mj=lambda: 1, power_now_w=lambda: 1.0)
    settings = TimingSettings(energy_batches=batches, energy_min_batch_ms=min_batch_ms)
    launchers = [Launcher(name, lambda: None) for name in sims]
    ms = {name: Measurement(samples_ms=[sim.launch_ms]) for name, sim in sims.items()}
    return energy_meter.measure_energy(launchers, ms, settings, tel)[1]


def test_a_too_short_warm_up_batch_is_doubled_until_the_counter_can_read_it():
    sim = _Sim(launch_ms=0.2, update_s=0.05)
    run = energy_meter.EnergyRun(count=launches_for(0.2, 40.0, 10**6))  # 40 ms: under two 50 ms updates
    energy_meter._batch(_launcher(), run, "counter", None, 2e6, 10.0, run_once=sim, warmup=True)
    # 40 ms holds one update (at 7 ms); 80 ms two, 50 ms apart, each known to within half a 0.3 ms poll gap
    assert sim.counts == [200, 400]
    assert len(run.warmup) == 1 and run.warmup[-1].ok and run.count == 400 and not run.batches
    assert run.warmup[-1].j_per_gemm == pytest.approx(700.0 * 0.2e-3, rel=0.01)


def test_a_warm_up_batch_that_cannot_grow_enough_is_marked_not_measured():
    sim = _Sim(launch_ms=1000.0, update_s=5.0)  # 1 s launches, a counter updating every 5 s
    run = energy_meter.EnergyRun(count=1)
    energy_meter._batch(_launcher(), run, "counter", None, 2e6, 10.0, run_once=sim, warmup=True)
    assert sim.counts == [1, 2, 4]  # 1, 2, then 4 s (MAX_BATCH_MS): no more doubling
    out = summarize_energy(run.warmup, flops=1, source="counter")
    assert out["energy_source"] == "none" and "2 are needed" in out["energy"]["reason"]


def test_a_counted_batch_that_misses_the_limit_runs_again_at_its_size_never_longer():
    """At the power cap a batch's energy per GEMM depends on its length (H100, fe28d79: CUTLASS 4096^3 BF16 read
    153-155 mJ in 0.57 s batches and 145-150 in 1.19 s ones), so a counted batch whose poll gaps were too wide
    for the 1% rule is run again at the size the warm-up settled, not doubled as a warm-up batch is."""
    windows = iter([Window(None, 480.0, 5, 0.012, reason="too close for the poll gaps"),
                    Window(None, 480.0, 5, 0.011, reason="too close for the poll gaps"),
                    Window(700.0, 500.0, 6, 0.004)])
    counts = []

    def run_once(ln, run, source, telemetry, cycles_per_ms, timeout_s):
        counts.append(run.count)
        return EnergyBatch(run.count, 560.0, source, next(windows)), False, 1.0, {}

    run = energy_meter.EnergyRun(count=2800)
    energy_meter._batch(_launcher(), run, "counter", None, 2e6, 10.0, run_once=run_once)
    assert counts == [2800] * 3 and run.count == 2800
    assert len(run.batches) == 1 and run.batches[0].ok and run.batches[0].window.power_w == 700.0
    # a batch that misses at every attempt is kept without a figure, still at its size
    run = energy_meter.EnergyRun(count=2800)
    energy_meter._batch(_launcher(), run, "counter", None, 2e6, 10.0, run_once=lambda *a: (
        EnergyBatch(2800, 560.0, "counter", Window(None, 480.0, 5, 0.02, reason="too close")), False, 1.0, {}))
    assert run.count == 2800 and len(run.batches) == 1 and not run.batches[0].ok


def test_a_row_whose_warm_up_finds_no_size_gets_no_counted_batches(monkeypatch):
    """A warm-up batch without a figure at MAX_BATCH_MS: the counted batches, at that size, would have none either
    (ATTEMPTS each), so the row stops with the warm-up's reason; the row beside it is measured."""
    sims = {"slow": _Sim(launch_ms=1000.0, update_s=5.0), "fine": _Sim(launch_ms=0.2, update_s=0.05)}
    runs = _measure_simulated(monkeypatch, sims, min_batch_ms=100.0)
    assert sims["slow"].counts == [1, 2, 4] and not runs["slow"].batches
    assert runs["slow"].note.startswith("no energy figure: the warm-up's batch had none (")
    assert len(runs["fine"].batches) == 6 and all(b.ok for b in runs["fine"].batches)


def _fake_nvml(monkeypatch, energy_supported: bool):
    nvml = types.SimpleNamespace(
        NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: "h", nvmlDeviceGetHandleByUUID=lambda u: "h",
        nvmlDeviceGetPowerUsage=lambda h: 612_000)

    def energy(h):
        if not energy_supported:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return 123_456
    nvml.nvmlDeviceGetTotalEnergyConsumption = energy
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    from gemmcompare.telemetry import Telemetry

    return Telemetry()


def test_a_warm_up_round_settles_power_and_batch_size_and_is_not_counted(monkeypatch):
    """The first round runs while the GPU settles (here 800 W, as the H200's first batches read 1-4% more
    energy per GEMM than its later ones) and sizes each row's batch: 40 ms holds one 38 ms update, so it doubles
    at once; 80 ms clears the limit (0.79% < 1%). The counted batches all run at that size and at the settled
    700 W; the warm-up batch is in the record, apart."""
    from gemmcompare.contracts.timing import Measurement

    assert energy_meter.WARMUP_ROUNDS == 1
    sim = _Sim(launch_ms=0.2, update_s=0.038, watts=lambda attempt: 800.0 if attempt < 2 else 700.0)
    monkeypatch.setattr(energy_meter, "_run_once", sim)
    tel = types.SimpleNamespace(energy_counter_mj=lambda: 1, power_now_w=lambda: 1.0)
    settings = TimingSettings(energy_batches=6, energy_min_batch_ms=40.0)
    _, runs = energy_meter.measure_energy([_launcher()], {"k": Measurement(samples_ms=[0.2])}, settings, tel)
    run = runs["k"]
    assert sim.counts == [200, 400] + [400] * 6
    assert [b.launches for b in run.batches] == [400] * 6 and [b.launches for b in run.warmup] == [400]
    out = summarize_energy(run.batches, flops=1, source="counter", warmup=run.warmup)
    assert out["energy_j_per_gemm"] == pytest.approx(700.0 * 0.2e-3, rel=0.01)
    assert out["energy"]["batches"] == 6 and out["energy"]["warmup"]["launches_per_batch"] == [400]
    assert out["energy"]["warmup"]["j_per_gemm"][0] == pytest.approx(800.0 * 0.2e-3, rel=0.01)


def test_a_warm_up_miss_on_the_poll_gaps_alone_is_tried_again_before_it_doubles():
    """Two counter updates, but the poll gaps too wide: the gaps vary from batch to batch, so the warm-up tries
    the size once more (it passes here) rather than doubling the problem's batch length at once; a second miss
    at one size doubles it."""
    gappy = Window(None, 480.0, 5, 0.012, reason="too close for the poll gaps")
    good = Window(700.0, 500.0, 6, 0.004)
    for windows, counts in (([gappy, good], [2800, 2800]), ([gappy, gappy, good], [2800, 2800, 5600])):
        seen, it = [], iter(windows)

        def run_once(ln, run, source, telemetry, cycles_per_ms, timeout_s):
            seen.append(run.count)
            return EnergyBatch(run.count, 0.2 * run.count, source, next(it)), False, 1.0, {}

        run = energy_meter.EnergyRun(count=2800)
        energy_meter._batch(_launcher(), run, "counter", None, 2e6, 10.0, run_once=run_once, warmup=True)
        assert seen == counts and run.warmup[-1].ok


def test_every_row_of_a_problem_counts_batches_of_one_length(monkeypatch):
    """SAME_LENGTH: after the warm-up, each row's launches are set so that its batches last as long as the
    longest warm-up batch of the problem (here the row whose counter needed 160 ms), at the launch time its own
    warm-up measured, so no row's figure comes from shorter, costlier batches than its neighbour's."""
    sims = {"a": _Sim(launch_ms=0.2, update_s=0.038), "b": _Sim(launch_ms=0.05, update_s=0.075)}
    runs = _measure_simulated(monkeypatch, sims, min_batch_ms=40.0)
    assert [b.span_ms for b in runs["a"].warmup] == [pytest.approx(80.0)]
    assert [b.span_ms for b in runs["b"].warmup] == [pytest.approx(160.0)]
    for name in "ab":
        assert [b.span_ms for b in runs[name].batches] == [pytest.approx(160.0)] * 6
    assert sims["a"].counts[-1] == 800 and sims["b"].counts[-1] == 3200


def test_a_row_whose_batches_all_starve_stops_after_one_batch_and_says_why(monkeypatch):
    """A launch the host enqueues slower than the GPU runs it starves every attempt, the gate doubling each
    time; its later batches would too (ATTEMPTS each, on every round), so the row stops after its first batch
    with the reason, and the row beside it still gets all of its batches."""
    from gemmcompare.contracts.timing import Measurement

    calls = []

    def run_once(ln, run, source, telemetry, cycles_per_ms, timeout_s):
        calls.append(ln.name)
        batch = EnergyBatch(run.count, 600.0, source, Window(700.0, 500.0, 6, 0.002))
        return batch, ln.name == "slow", 1.0, {}

    monkeypatch.setattr(energy_meter, "_run_once", run_once)
    tel = types.SimpleNamespace(energy_counter_mj=lambda: 1, power_now_w=lambda: 1.0)
    settings = TimingSettings(energy_batches=6)
    launchers = [Launcher("slow", lambda: None), Launcher("fine", lambda: None)]
    ms = {"slow": Measurement(samples_ms=[0.01]), "fine": Measurement(samples_ms=[0.5])}
    _, runs = energy_meter.measure_energy(launchers, ms, settings, tel)
    assert calls.count("slow") == energy_meter.ATTEMPTS and calls.count("fine") == 1 + 6
    slow = runs["slow"]
    assert not slow.batches and len(slow.warmup) == 1 and "GPU idled between launches" in slow.note
    assert f"grown to {slow.gate_ms:.0f} ms" in slow.note and slow.gate_ms > runs["fine"].gate_ms
    out = summarize_energy(slow.batches, flops=1, source="counter", note=slow.note, warmup=slow.warmup)
    assert out["energy_source"] == "none" and "GPU idled between launches" in out["energy"]["reason"]
    assert len(runs["fine"].batches) == 6


def test_a_missing_counter_falls_back_to_power_samples_and_says_so(monkeypatch):
    tel = _fake_nvml(monkeypatch, energy_supported=False)
    assert tel.energy_counter_mj() is None and tel.power_now_w() == pytest.approx(612.0)
    assert energy_meter.energy_source(tel) == "power_samples"
    sim = _Sim(launch_ms=0.5, counter=False)
    run = energy_meter.EnergyRun(count=launches_for(0.5, 100.0, 10**6))
    for _ in range(6):
        energy_meter._batch(_launcher(), run, "power_samples", tel, 2e6, 10.0, run_once=sim)
    out = summarize_energy(run.batches, flops=2 * 1024 ** 3, source="power_samples")
    assert out["energy_source"] == "power_samples"
    assert out["energy_j_per_gemm"] == pytest.approx(700.0 * 0.5e-3, rel=0.01)


def test_the_counter_is_used_where_there_is_one(monkeypatch):
    tel = _fake_nvml(monkeypatch, energy_supported=True)
    assert tel.energy_counter_mj() == 123_456 and energy_meter.energy_source(tel) == "counter"
    assert energy_meter.energy_source(None) == "none"


def test_untimed_rows_get_no_energy_batch():
    from gemmcompare.contracts.timing import Measurement

    runs = energy_meter.measure_energy([_launcher()], {"k": Measurement()}, TimingSettings(), telemetry=None)
    assert runs[0] == "none" and runs[1]["k"].note == "not timed" and not runs[1]["k"].batches


def test_energy_batches_run_under_a_short_gil_switch_interval_and_restore_it(monkeypatch):
    """The poll thread must get the GIL back often while the enqueue loop launches; the process's setting comes
    back afterwards, also when a batch raises, and a setting already shorter is kept."""
    from gemmcompare.contracts.timing import Measurement

    seen = []
    monkeypatch.setattr(energy_meter, "_batch", lambda *a, **k: seen.append(sys.getswitchinterval()))
    tel = types.SimpleNamespace(energy_counter_mj=lambda: 1, power_now_w=lambda: 1.0)
    settings = TimingSettings(energy_batches=6)
    before = sys.getswitchinterval()
    energy_meter.measure_energy([_launcher()], {"k": Measurement(samples_ms=[0.5])}, settings, tel)
    assert seen == [pytest.approx(energy_meter.POLL_SWITCH_INTERVAL_S)] * (energy_meter.WARMUP_ROUNDS + 6)
    assert sys.getswitchinterval() == before

    def boom(*a, **k):
        raise TimeoutError("hang")
    monkeypatch.setattr(energy_meter, "_batch", boom)
    with pytest.raises(energy_meter.EnergyFailure):
        energy_meter.measure_energy([_launcher()], {"k": Measurement(samples_ms=[0.5])}, settings, tel)
    assert sys.getswitchinterval() == before
    with energy_meter.short_switch_interval(1e-5 / 2):
        with energy_meter.short_switch_interval(energy_meter.POLL_SWITCH_INTERVAL_S):
            assert sys.getswitchinterval() == pytest.approx(1e-5 / 2)


def test_the_energy_gate_is_sized_per_launch_of_the_timed_batch_even_when_the_timer_halved_it(monkeypatch):
    """A launcher whose timed batches were halved to fit the launch queue (2 launches of 10 ms of enqueue each)
    gets an energy gate sized from 10 ms a launch, not from the spec's 10-launch batch (2 ms a launch)."""
    from gemmcompare.contracts.timing import Measurement

    monkeypatch.setattr(energy_meter, "_batch", lambda *a, **k: None)
    tel = types.SimpleNamespace(energy_counter_mj=lambda: 1, power_now_w=lambda: 1.0)
    m = Measurement(samples_ms=[5.0], last_enqueue_ms=20.0, batch_size=2)
    _, runs = energy_meter.measure_energy([_launcher()], {"k": m}, TimingSettings(energy_batches=6), tel)
    run = runs["k"]
    assert run.gate_ms == pytest.approx(2.0 * 10.0 * min(run.count, energy_meter.QUEUE_DEPTH))


def test_the_energy_setting_of_a_spec(tmp_path):
    from gemmcompare.errors import GemmCompareError
    from gemmcompare.spec import load_spec

    def spec(energy: str):
        path = tmp_path / "s.yaml"
        path.write_text(f"name: e\nproblems: [{{m: 64, n: 64, k: 64}}]\ncontracts: [f16_f32acc_tn]\n"
                        f"implementations: [library.cublas]\ntiming: {{l2: flush{energy}}}\n")
        return load_spec(path)

    plain = spec("")
    assert plain.timing.energy_batches == 0 and "energy_batches" not in plain.timing.as_dict()
    assert spec(", energy: true").timing.energy_batches == 7
    assert spec(", energy: false").timing.energy_batches == 0
    custom = spec(", energy: {batches: 9, min_batch_ms: 250}").timing
    assert (custom.energy_batches, custom.energy_min_batch_ms) == (9, 250.0)
    with pytest.raises(GemmCompareError, match="at least 6"):
        spec(", energy: {batches: 3}")
    with pytest.raises(GemmCompareError, match="min_batch_msx|unknown"):
        spec(", energy: {min_batch_msx: 3}")
    with pytest.raises(GemmCompareError, match=r"min_batch_ms must be at most 4000 \(the longest energy batch\), got 60000"):
        spec(", energy: {min_batch_ms: 60000}")
    assert spec(", energy: {min_batch_ms: 4000}").timing.energy_min_batch_ms == 4000.0


def test_the_energy_spec_runs_each_family_under_its_own_contract():
    from pathlib import Path

    from gemmcompare.spec import load_spec

    exp = load_spec(Path(__file__).resolve().parents[1] / "experiments" / "energy.yaml")
    assert exp.timing.energy_batches == 9 and "energy_vs_speed" in exp.report.plots
    assert [p.problem.m for p in exp.problems] == [4096, 8192]
    runs = {(c.name, i.family if i.family != "library" else i.name)
            for c in exp.contracts for p in exp.problems for i in exp.implementations if i.supports(p.problem, c)}
    assert runs == {("bf16_bf16out_f32acc_tn", "library.cublas"), ("bf16_bf16out_f32acc_tn", "cutlass"),
                    ("bf16_bf16out_f32acc_tn", "hopper"), ("e4m3_bf16out_f32acc_tn_tensor", "library.cublaslt_fp8"),
                    ("e4m3_bf16out_f32acc_tn_tensor", "cutlass"), ("e4m3_bf16out_f32acc_tn_tensor", "hopper")}, runs


def test_the_printed_table_shows_energy_only_for_a_run_that_measured_it(capsys):
    from gemmcompare.cli.run import print_rows
    from gemmcompare.results import Result, Status

    row = Result("r", "8x8x8", 8, 8, 8, 1, "c", "library.cublas", "library", {}, Status.PASS, median_ms=0.1,
                 tflops=1.0)
    print_rows([row])
    assert "J/GEMM" not in capsys.readouterr().out
    row.energy_j_per_gemm, row.energy_ci_rel, row.avg_power_w = 0.14449513, 0.0044346, 697.37
    print_rows([row])
    out = capsys.readouterr().out
    assert "J/GEMM" in out and "0.1445" in out and "0.44%" in out and "697" in out


def test_run_energy_measures_energy_as_if_the_spec_said_so_and_the_hash_says_it():
    from pathlib import Path

    from gemmcompare.cli import build_parser
    from gemmcompare.plan import narrow
    from gemmcompare.spec import load_spec
    from gemmcompare.spec.settings import ENERGY_BATCHES

    root = Path(__file__).resolve().parents[1] / "experiments"
    quick = load_spec(root / "quickstart.yaml")
    assert quick.timing.energy_batches == 0
    on = narrow(quick, energy=True)
    assert on.timing.energy_batches == ENERGY_BATCHES and dict(on.narrowed) == {"energy": "true"}
    assert on.spec_hash != quick.spec_hash and narrow(quick).spec_hash == quick.spec_hash
    assert narrow(quick, energy=True, l2="evict").spec_hash not in (on.spec_hash, narrow(quick, l2="evict").spec_hash)
    # a spec that measures energy keeps its own batching, and its hash: --energy adds nothing to it
    own = load_spec(root / "energy.yaml")
    assert narrow(own, energy=True).spec_hash == own.spec_hash
    assert build_parser().parse_args(["run", "x.yaml", "--energy"]).energy
    assert build_parser().parse_args(["build", "x.yaml", "--energy"]).energy


def test_a_rows_energy_record_says_its_batches_rules(monkeypatch):
    """The row's `energy` record carries the two rules that make its figure comparable with its neighbours':
    no L2 action inside a batch, and one batch length for the problem; and its counted batches at that length."""
    from gemmcompare.results import Result, Status
    from gemmcompare.runner.executor import _attach_energy

    sims = {"library.cublas": _Sim(launch_ms=0.2, update_s=0.038), "b": _Sim(launch_ms=0.05, update_s=0.075)}
    runs = _measure_simulated(monkeypatch, sims, min_batch_ms=40.0)
    row = Result("r", "8x8x8", 8, 8, 8, 1, "c", "library.cublas", "library", {}, Status.PASS, median_ms=0.2,
                 tflops=1.0, flops=1024)
    _attach_energy(row, ("counter", runs))
    assert row.energy["l2"] == energy_meter.L2_NOTE and row.energy["batch_length"] == energy_meter.SAME_LENGTH
    assert row.energy["batch_ms"] == [pytest.approx(160.0)] * 6 and row.energy_source == "counter"
