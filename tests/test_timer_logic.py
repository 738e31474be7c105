"""The timer's bookkeeping on the CPU, with CUDA events stubbed: rotation resets, which copy ran last,
and a hang stopping everything and blaming the launcher that hung."""

import types

import pytest

from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings


class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def query(self):  # the sleep gate is never found finished: no batch is starved
        return False

    def elapsed_time(self, other):
        return 1.0


def _timer(**settings) -> Timer:
    t = Timer.__new__(Timer)  # no CUDA: build it by hand with a fake torch.cuda
    t.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=_Event, _sleep=lambda c: None,
                                                              synchronize=lambda: None))
    t.s = TimingSettings(**settings)
    t.flush_buffer, t.cycles_per_ms = None, 2e6
    t._sync = lambda name: None
    return t


def test_each_rotation_copy_gets_its_own_reset_and_the_last_one_is_known():
    state = {i: "garbage" for i in range(7)}

    def launch(i):
        return lambda: state.__setitem__(i, "right" if state[i] == "c0" else "stale")

    def reset(i):
        return lambda: state.__setitem__(i, "c0")

    ln = Launcher("cublas", launch(0), [launch(i) for i in range(1, 7)], [reset(i) for i in range(7)])
    m = _timer(l2="rotate", min_samples=10, max_samples=23, target_noise=0.0).measure([ln])["cublas"]
    assert state[m.last_index] == "right"  # the copy whose output the re-check reads was reset before it ran
    assert all(v == "right" for v in state.values())


def test_resets_must_match_launches():
    with pytest.raises(ValueError):
        Launcher("x", lambda: None, [lambda: None], [lambda: None])


def test_a_hang_stops_everyone_and_blames_the_launcher_that_hung():
    t = _timer(l2="warm", min_samples=10, max_samples=60, target_noise=0.0)
    state = {"hung": False, "b": 0}

    def sync(name):
        if state["hung"]:
            raise TimeoutError(f"{name}: no completion")

    t._sync = sync

    def b_launch():
        state["b"] += 1
        if state["b"] > 25:  # B hangs in its third timed batch
            state["hung"] = True

    res = t.measure([Launcher("A", lambda: None), Launcher("B", b_launch), Launcher("C", lambda: None)])
    assert res["B"].fatal and isinstance(res["B"].error, TimeoutError)
    assert not res["A"].fatal and res["A"].error is None and "stopped: B failed" in res["A"].stop_reason
    assert res["C"].error is None


def test_stage_messages_cover_warm_up_and_timing():
    seen = []
    _timer(l2="warm", min_samples=10, max_samples=10).measure([Launcher("A", lambda: None)],
                                                              stage=lambda n, what: seen.append((n, what)))
    assert ("A", "warm-up") in seen and ("A", "timing") in seen


class _GatedClock:
    """A host clock and a sleep gate for the timer, simulated: the gate in front of a batch passes once the host
    has spent longer than it enqueuing; `queued` counts the kernels enqueued behind the current gate."""

    def __init__(self, monkeypatch, t: Timer):
        from gemmcompare.contracts import timing

        self.s, self.gate_ms, self.gate_passed, self.gate_from, self.queued = 0.0, 0.0, True, 0.0, 0
        monkeypatch.setattr(timing.time, "perf_counter", lambda: self.s)
        clock = self

        class Gate(_Event):
            def query(self):
                return clock.gate_passed

        t.torch.cuda.Event = Gate
        t.torch.cuda._sleep = self._sleep
        self.cycles_per_ms = t.cycles_per_ms

    def _sleep(self, cycles):  # a new batch's gate
        self.gate_ms, self.gate_passed, self.gate_from, self.queued = cycles / self.cycles_per_ms, False, self.s, 0

    def spend(self, seconds):
        self.s += seconds
        if (self.s - self.gate_from) * 1e3 >= self.gate_ms:
            self.gate_passed = True


def test_a_launcher_that_waits_for_the_gpu_is_given_up_quickly_and_holds_nobody_up(monkeypatch):
    """A callable with a synchronize inside enqueues for as long as the sleep gate runs: every batch is
    starved, however long the gate (it doubled every batch: 2^40 ms by the starvation rule's 40th). It is
    given up after STARVED_SIZED_STOP batches starved behind gates sized from the batch before, at every batch
    size down to one launch; a launcher whose host time is merely long (150 ms a batch) gets a gate that covers
    it and is timed; a fast one timed beside them keeps short gates."""
    from gemmcompare.contracts.timing import STARVED_SIZED_STOP

    t = _timer(l2="warm", min_samples=10, max_samples=100, target_noise=0.0)
    clock = _GatedClock(monkeypatch, t)
    spend = clock.spend

    def syncs():  # waits for everything queued: the gate first
        spend(clock.gate_ms / 1e3 + 1e-6)

    def slow_host():  # 15 ms of Python per call
        spend(15e-3)

    def fine():  # 20 us of host time per launch
        spend(20e-6)

    res = t.measure([Launcher("syncs", syncs), Launcher("slow_host", slow_host), Launcher("fine", fine)])
    bad, slow, good = res["syncs"], res["slow_host"], res["fine"]
    assert not bad.samples_ms and "the launch waits for the GPU" in bad.stop_reason
    # given up at one launch a batch: halved 10 -> 5 -> 2 -> 1 (the launch queue could have been the cause), each
    # size given up after STARVED_SIZED_STOP batches starved behind sized gates
    assert bad.starved_sized >= STARVED_SIZED_STOP and bad.batch_size == 1 and "also one launch" in bad.stop_reason
    assert bad.batches <= 4 * (STARVED_SIZED_STOP + 1)
    assert slow.samples_ms and slow.starved_batches == 1 and 300 <= slow.sleep_ms < 400
    assert good.samples_ms and good.sleep_ms <= 1.0  # its gates never grew with the others'


def test_a_launch_of_hundreds_of_kernels_gets_batches_that_fit_the_launch_queue(monkeypatch):
    """A loop of one GEMM per expert enqueues hundreds of kernels a launch. Ten such launches overfill CUDA's
    launch queue (about a thousand entries): the host's launch call then blocks until the sleep gate at the
    queue's head ends, and the batch starves however long its gate, as if the launch synchronized. Its batch is
    halved until it fits (300 kernels a launch: 2 launches), and it is timed; the row's timing says so."""
    queue_depth, kernels, per_kernel_s = 1024, 300, 5e-6
    t = _timer(l2="warm", min_samples=10, max_samples=40, target_noise=0.0)
    clock = _GatedClock(monkeypatch, t)

    def loop_of_gemms():
        for _ in range(kernels):
            if clock.queued >= queue_depth and not clock.gate_passed:
                clock.spend(clock.gate_ms / 1e3)  # blocked on a full queue until the gate ends
            clock.queued += 1
            clock.spend(per_kernel_s)

    m = t.measure([Launcher("loop", loop_of_gemms)])["loop"]
    assert m.samples_ms and m.done
    assert m.batch_size == 2 and 2 * kernels <= queue_depth < 5 * kernels
    assert "starved" not in m.stop_reason


def _scripted(t: Timer, samples: dict) -> Timer:
    """The timer with its batches scripted: launcher name -> the sample every launch of it reads, as a
    function of the launch's index (a stable row meets its noise target at once, a noisy one never)."""

    def run_batch(ln, m, count, graph=None, index=0):
        for _ in range(count):
            m.samples_ms.append(samples[ln.name](len(m.samples_ms)))
        m.batches += 1

    t.run_batch = run_batch
    return t


STABLE, NOISY = (lambda i: 1.0), (lambda i: 1.0 + (i % 7) / 10)


def test_without_lockstep_a_stable_row_stops_as_soon_as_its_target_is_met():
    t = _scripted(_timer(l2="warm", min_samples=10, max_samples=40, batch=5, target_noise=0.01),
                  {"cublas": NOISY, "cutlass": STABLE})
    res = t.measure([Launcher("cublas", lambda: None), Launcher("cutlass", lambda: None)])
    assert (res["cutlass"].batches, res["cublas"].batches) == (2, 8)
    assert res["cutlass"].stop_reason.startswith("noise target met") and "sample cap 40" in res["cublas"].stop_reason


def test_lockstep_samples_every_row_of_a_problem_over_the_same_batches():
    """With lockstep the stable row samples on until the noisy one stops (at its cap): both rows then hold the
    same rounds, so a drifting GPU state weighs on both alike; each says why it stopped."""
    t = _scripted(_timer(l2="warm", min_samples=10, max_samples=40, batch=5, target_noise=0.01, lockstep=True),
                  {"cublas": NOISY, "cutlass": STABLE, "decode": STABLE})
    res = t.measure([Launcher(n, lambda: None) for n in ("cublas", "cutlass", "decode")])
    assert {n: m.batches for n, m in res.items()} == {"cublas": 8, "cutlass": 8, "decode": 8}
    assert res["cublas"].stop_reason.startswith("sample cap 40")
    assert res["cutlass"].stop_reason.startswith("noise target met, sampled on in lockstep to the sample cap 40")


def test_lockstep_stops_everyone_together_once_every_row_meets_its_target():
    late = lambda i: 1.0 + (i % 7) / 10 if i < 20 else 1.0  # noisy for its first 20 samples, then steady
    t = _scripted(_timer(l2="warm", min_samples=10, max_samples=400, batch=5, target_noise=0.01, lockstep=True),
                  {"cublas": late, "cutlass": STABLE})
    res = t.measure([Launcher("cublas", lambda: None), Launcher("cutlass", lambda: None)])
    assert res["cublas"].batches == res["cutlass"].batches < 80
    assert all("in lockstep until every row of the problem stopped" in m.stop_reason for m in res.values())


def test_lockstep_is_off_by_default_and_absent_from_the_settings_hash():
    assert "lockstep" not in TimingSettings().as_dict()
    assert TimingSettings(lockstep=True).as_dict()["lockstep"] is True


class _Buffer:
    """Records what the timer does to the flush buffer between samples."""

    def __init__(self):
        self.calls = []

    def fill_(self, value):
        self.calls.append("write")

    def sum(self):
        self.calls.append("read")


@pytest.mark.parametrize("policy, launcher_flush, expected", [
    ("flush", False, ["write"]), ("evict", False, ["read"]), ("rotate", False, []), ("rotate", True, ["write"]),
])
def test_between_samples_flush_writes_the_buffer_and_evict_only_reads_it(policy, launcher_flush, expected):
    """evict must leave L2 holding clean lines: a read pass, never the fill that flush makes (whose 2x L2 of
    written lines the timed kernel's misses would first write back)."""
    t = _timer(l2=policy)
    t.flush_buffer = _Buffer()
    t._between_samples(Launcher("x", lambda: None, flush=launcher_flush))
    assert t.flush_buffer.calls == expected


def _logged(t: Timer) -> list:
    """Each batch the timer runs, as (launcher, launches in it, samples it kept)."""
    log, run = [], t.run_batch

    def run_batch(ln, m, count, graph=None, index=0):
        before = len(m.samples_ms)
        run(ln, m, count, graph, index)
        log.append((ln.name, count, len(m.samples_ms) - before))

    t.run_batch = run_batch
    return log


def test_the_batch_that_fits_the_launch_queue_follows_the_kernels_a_launch_enqueues():
    t = _timer(batch=10)
    assert t.fitting_batch(1) == 10 and t.fitting_batch(8) == 10  # a dense GEMM; Mixtral's 8 experts
    assert t.fitting_batch(128) == 5 and t.fitting_batch(256) == 2  # Qwen3's 128, DeepSeek-V3's 256 experts
    assert t.fitting_batch(5000) == 1


def test_every_row_of_a_problem_shares_the_batch_of_a_launcher_that_declares_many_kernels(monkeypatch):
    """A loop of 256 per-expert calls says so (Launcher.kernels): from the first round every row of its problem,
    the one-kernel rows beside it included, is sampled in batches of 2, so that no row's samples come from later
    places in a longer burst than another's (a power-capped GPU slows within a burst); nothing starves."""
    t = _timer(l2="warm", min_samples=10, max_samples=40, target_noise=-1.0)  # never met: every row samples to the cap
    clock = _GatedClock(monkeypatch, t)
    log = _logged(t)
    res = t.measure([Launcher("loop", lambda: clock.spend(256 * 1e-6), kernels=256),
                     Launcher("grouped", lambda: clock.spend(20e-6))])
    assert {count for _, count, _ in log} == {2}
    for m in res.values():
        assert m.batch_size == 2 and m.starved_batches == 0 and len(m.samples_ms) == 40
        assert "loop enqueues 256 kernels a launch" in m.batch_note and m.restarts == 0


def test_a_row_that_starves_into_smaller_batches_takes_the_problem_with_it(monkeypatch):
    """A loop that does not declare its kernels overfills the launch queue and is halved 10 -> 5 -> 2 by
    starving. Meanwhile the row beside it was sampled in batches of 10: once the loop is timed at 2, that row's
    samples are dropped and it samples again in batches of 2, so both rows' samples come from batches of one
    size (its timing counts the restart)."""
    queue_depth, kernels = 1024, 300
    t = _timer(l2="warm", min_samples=10, max_samples=40, target_noise=-1.0)  # never met: every row samples to the cap
    clock = _GatedClock(monkeypatch, t)
    log = _logged(t)

    def loop_of_gemms():
        for _ in range(kernels):
            if clock.queued >= queue_depth and not clock.gate_passed:
                clock.spend(clock.gate_ms / 1e3)  # blocked on a full queue until the gate ends
            clock.queued += 1
            clock.spend(5e-6)

    res = t.measure([Launcher("loop", loop_of_gemms), Launcher("grouped", lambda: clock.spend(20e-6))])
    loop, grouped = res["loop"], res["grouped"]
    first = next(i for i, (name, _, kept) in enumerate(log) if name == "loop" and kept)
    assert any(name == "grouped" and count == 10 and kept for name, count, kept in log[:first])  # sampled at 10
    after = [(count, kept) for name, count, kept in log[first:] if name == "grouped"]
    assert {count for count, _ in after} == {2} and len(grouped.samples_ms) == sum(kept for _, kept in after)
    assert grouped.restarts == 1 and grouped.batch_size == 2 and len(grouped.samples_ms) == 40
    assert loop.batch_size == 2 and loop.restarts == 0 and len(loop.samples_ms) == 40
    assert "loop starved in larger ones" in grouped.batch_note


def test_a_launcher_that_waits_for_the_gpu_does_not_shrink_the_others_batches(monkeypatch):
    """One that synchronizes is halved to one launch and given up, never timed: the rows beside it keep the
    settings' batch and their samples."""
    t = _timer(l2="warm", min_samples=10, max_samples=30, target_noise=-1.0)  # never met: every row samples to the cap
    clock = _GatedClock(monkeypatch, t)
    res = t.measure([Launcher("syncs", lambda: clock.spend(clock.gate_ms / 1e3 + 1e-6)),
                     Launcher("fine", lambda: clock.spend(20e-6))])
    assert not res["syncs"].samples_ms
    assert res["fine"].batch_size == 0 and res["fine"].restarts == 0 and len(res["fine"].samples_ms) == 30


class _FakeClock:
    """CUPTI's profiler as the timer drives it: started once, stopped once; records the round it was stopped in."""

    def __init__(self, log: list):
        self.log, self.error = log, None

    def start(self):
        return True

    def annotate(self, tag):
        import contextlib

        return contextlib.nullcontext()

    def stop(self):
        self.log.append("stopped")
        return {}


def _clocked(method: str, samples: dict):
    log = []
    t = _scripted(_timer(l2="warm", min_samples=10, max_samples=30, batch=5, target_noise=-1.0, method=method),
                  samples)
    run = t.run_batch

    def run_batch(ln, m, count, graph=None, index=0):
        log.append("clocked" if t.clock is not None else "unclocked")
        run(ln, m, count, graph, index)

    t.run_batch, t.clock_factory = run_batch, lambda: _FakeClock(log)
    res = t.measure([Launcher(name, lambda: None) for name in samples])
    return t, res, log


def test_auto_stops_cupti_once_every_row_is_too_long_for_it_to_be_chosen():
    """Every row's samples take 0.5 ms or more by events: `auto` reports CUPTI only for a problem whose shortest row
    is under 0.2 ms, so after the first round the profiler is stopped (its records, costly to read, discarded) and
    the rows are timed by events; the timing receipt says why."""
    t, res, log = _clocked("auto", {"cublas": lambda i: 0.5, "loop": lambda i: 12.0})
    assert log[:3] == ["clocked", "clocked", "stopped"] and set(log[3:]) == {"unclocked"}
    assert all(m.method == "events" and not m.cupti_samples_ms and len(m.samples_ms) == 30 for m in res.values())
    assert "CUPTI stopped once every row had samples: the shortest took 0.500 ms" in t.describe()["cupti"]


def test_cupti_is_kept_where_a_row_could_be_short_enough_or_the_method_asks_for_it():
    _, _, log = _clocked("auto", {"decode": lambda i: 0.39, "loop": lambda i: 12.0})  # 0.39 ms: under 2 x 0.2
    assert log.count("stopped") == 1 and log[-1] == "stopped" and "unclocked" not in log
    t, _, log = _clocked("cupti", {"cublas": lambda i: 0.5, "loop": lambda i: 12.0})  # profile's setting
    assert log[-1] == "stopped" and "unclocked" not in log and "cupti" not in t.describe()
