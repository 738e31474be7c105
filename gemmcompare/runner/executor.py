"""Measuring one problem under one contract: inputs once, references once, every implementation checked,
then all of them timed interleaved. Rows go out through a callback as soon as each is final.

Runs inside the measuring worker process (worker.py), on a dedicated non-blocking stream the harness owns:
work an implementation enqueues anywhere else is not ordered with the harness's events, and is caught.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..build.extension import BuildFailure, LoadedExtension
from ..contracts import correctness as corr
from ..contracts.precision import PrecisionContract
from ..contracts.timing import MAX_ROTATION_COPIES, Launcher, rotation_copies, wait_stream
from ..device import DeviceInfo
from ..dtypes import DTYPE_INFO
from ..implementations.base import Implementation, Prepared
from ..problems import GemmProblem
from ..results import Result, Status
from ..spec import Experiment, ProblemEntry
from ..tuning.tuned import Picked, TunedImplementation, build_name
from .inputs import Draw, draw_inputs, same_bits
from .predictions import attach_predictions
from .rows import ContextLost, Emit, Stage, base_row, copy_build_resources, row_problem

if TYPE_CHECKING:
    from .picking import RaceBench

# A row is flagged when more than this share of its telemetry samples saw a power or thermal cap.
THROTTLED_MAJORITY = 0.5
# Faster than this multiple of the device's datasheet peak is not a measurement but a defect (work done
# elsewhere, or not done at all).
IMPLAUSIBLE_PEAK_FACTOR = 1.05
# Length of the sleep kernel queued ahead of the poison before a checking launch (see _check_one).
OTHER_STREAM_GUARD_MS = 5.0


def estimate_bytes(p: GemmProblem, contract: PrecisionContract, n_impls: int) -> int:
    """Device memory one (problem, contract) needs: FP32 originals, rounded inputs and their layouts, two
    FP64 references and the magnitude term, an output per implementation, the checker's row chunks; a
    batched problem holds every matrix of each at once (the checker's chunks are one matrix's). A grouped one
    is drawn group by group (runner/inputs.py): its stacked operands are the contract's dtypes alone, and only the
    largest group's draw (its FP32 originals and FP64 operands) lives beside them."""
    ia, ic = DTYPE_INFO[contract.a].itemsize, DTYPE_INFO[contract.c].itemsize
    chunks = 8 * 4 * 2048 * p.n
    if p.is_grouped:
        return _grouped_bytes(p, ia, ic, n_impls) + chunks
    mk, kn, mn = p.m * p.k * p.batch, p.k * p.n * p.batch, p.m * p.n * p.batch
    return 4 * (mk + kn) + ia * (mk + kn) * 3 + 8 * 3 * mn + n_impls * mn * ic + chunks


def _grouped_bytes(p, ia: int, ic: int, n_impls: int) -> int:
    """A grouped problem's share of estimate_bytes. Without FP32 originals of every group's weights (a 256-expert
    layer's are 30 GB, where its BF16 weights are 15) the DeepSeek-V3 up/gate layer fits an 80 GB card: the estimate
    of 4 + 3 x 2 bytes a weight refused it at 512 tokens and more on the H100 (71-97 GiB; 92f7279)."""
    mk, kn, mn = p.rows * p.k, p.groups * p.n * p.k, p.rows * p.n
    stacked = ia * (mk + kn) * 3  # handed out, pristine, one laid-out copy
    biggest = max(max(p.ms), 1)
    one_draw = (4 + ia + 2 * 8) * (biggest * p.k + p.k * p.n) + 8 * 3 * biggest * p.n  # FP32, rounded, FP64 x2; refs
    masked_rows = 8 * 3 * mn if p.layout == "masked" else 0  # the check's valid-row copies of the references
    return stacked + one_draw + 8 * 3 * mn + masked_rows + n_impls * mn * ic


def peak_tflops(device: DeviceInfo, contract: PrecisionContract) -> float | None:
    try:
        from ..peaks import peak_for

        found = peak_for(device.name, contract.as_dict())
    except Exception:  # noqa: BLE001 - no peak known: no % of peak
        return None
    return found[0] if found else None


@dataclass
class _Timed:
    """One implementation being timed: its row, its prepared launch and rotation copies, its launcher."""

    impl: Implementation
    row: Result
    prepared: Prepared
    copies: list
    launcher: Launcher
    row_energy: Any = None  # (source, name -> EnergyRun) of the problem's energy batches, or None


class ProblemExecutor:
    def __init__(self, exp: Experiment, run_id: str, device: DeviceInfo, builds: dict[str, Any], telemetry,
                 emit: Emit, stage: Stage = lambda impl, what: None):
        self.exp, self.run_id, self.device, self.builds = exp, run_id, device, builds
        self.telemetry, self.emit, self.stage = telemetry, emit, stage
        self.phases: dict[str, float] = {}
        self._inner: list[float] = []  # seconds of phases nested in each open one (timing holds a draw)

    @contextlib.contextmanager
    def _phase(self, name: str):
        """Time a phase, less the phases inside it: the phases add up to the group's time."""
        t0 = time.monotonic()
        self._inner.append(0.0)
        try:
            yield
        finally:
            spent, inner = time.monotonic() - t0, self._inner.pop()
            self.phases[name] = self.phases.get(name, 0.0) + spent - inner
            if self._inner:
                self._inner[-1] += spent

    def take_phases(self) -> dict[str, float]:
        """The phases' seconds since the last call (one job's, in the worker)."""
        out, self.phases = self.phases, {}
        return out

    # -- one problem under one contract ------------------------------------------------------------
    def run(self, entry: ProblemEntry, contract: PrecisionContract, impls: list[Implementation]) -> None:
        import torch

        exp, p = self.exp, entry.problem
        need = estimate_bytes(p, contract, len(impls))
        free = torch.cuda.mem_get_info(self.device.index)[0]
        runnable: list[tuple[Implementation, Result, LoadedExtension | None]] = []
        too_big = (f"needs about {need / 2**30:.1f} GiB of device memory, {free / 2**30:.1f} GiB free"
                   if need > 0.9 * free else "")
        if not too_big:  # a tuned row races its candidates first (too big: admission writes its SKIP)
            impls = [self._picked(impl, entry, contract) if isinstance(impl, TunedImplementation) else impl
                     for impl in impls]
            impls = [impl for impl in impls if impl is not None]
        for impl in impls:
            row = base_row(self.run_id, exp, entry, contract, impl.name, impl.family, impl.params)
            if isinstance(impl, Picked):  # the tuned row says what it runs and how it was chosen
                row.params = {**row.params, "pick": impl.winner.name}
                row.add_note(impl.tuning.note())
            if self._admit(impl, row, p, contract, too_big):
                runnable.append((impl, row, self.builds.get(build_name(impl))))
        if not runnable:
            return

        fixtures = corr.fixtures_to_check(tuple(entry.fixtures or exp.correctness.fixtures), contract, p)
        alive = list(runnable)
        for fixture in fixtures:
            draw = self._draw(fixture, p, contract)
            still = []
            for impl, row, ext in alive:
                with self._phase("check_s"):
                    prepared = self._check_one(impl, row, ext, draw, contract, p.k, fixture)
                if prepared is not None:
                    still.append((impl, row, ext))
                del prepared
            alive = still
            del draw
        if not alive:
            return
        if not entry.time:
            for impl, row, _ in alive:
                row.status = Status.PASS
                row.add_note("correctness only (time: false)")
                self.emit(row)
            return
        with self._phase("timing_s"):
            self._time(alive, fixtures, contract, p)

    def _picked(self, tuned: TunedImplementation, entry: ProblemEntry, contract: PrecisionContract):
        """A tuned row's winner for this group (runner/picking.py), carrying its note; None after emitting the
        row's SKIP or BUILD_ERROR when no candidate can be raced. A tuned row the plan skips stays as it is
        (admission writes its SKIP)."""
        from .picking import NoPick, pick

        if not tuned.check(entry.problem, contract, self.device):
            return tuned
        try:
            return pick(self._race_bench(), tuned, entry, contract)
        except NoPick as exc:
            row = base_row(self.run_id, self.exp, entry, contract, tuned.name, tuned.family, tuned.params)
            row.status = Status.BUILD_ERROR if exc.build_failed else Status.SKIP
            row.reason = f"tuning: {exc}"
            self.emit(row)
            return None

    def _race_bench(self) -> RaceBench:
        """What a tuned row's race uses of this executor (picking.RaceBench): the run, the GPU and the builds,
        this group's phases, its draws and its check of one implementation."""
        from .picking import RaceBench

        return RaceBench(exp=self.exp, run_id=self.run_id, device=self.device, builds=self.builds,
                         stage=self.stage, phase=self._phase, draw=self._draw, check=self._check_one,
                         driver=self._driver_version)

    def _driver_version(self) -> str | None:
        fn = getattr(self.telemetry, "driver_version", None)
        return fn() if fn is not None else None

    def _admit(self, impl: Implementation, row: Result, p: GemmProblem, contract: PrecisionContract,
               too_big: str) -> bool:
        """Whether the implementation runs here (else its SKIP or BUILD_ERROR row is emitted); copies the
        build's resources (ptxas registers, shared memory, spills, performance notes) onto the row."""
        s = impl.check(p, contract, self.device)
        if not s or too_big:
            row.reason = s.reason if not s else too_big
            self.emit(row)
            return False
        ext = self.builds.get(build_name(impl))
        if isinstance(ext, BuildFailure):
            row.status, row.reason, row.build_seconds = Status.BUILD_ERROR, ext.message, ext.seconds
            self.emit(row)
            return False
        if ext is not None:
            copy_build_resources(row, ext.resources_for(impl.kernel_filter_for(contract)), impl)
            row.arch, row.build_flags, row.build_seconds = ext.plan.arch, ext.plan.cuda_flags_full(), ext.build_seconds
        return True

    def _draw(self, fixture: str, p: GemmProblem, contract: PrecisionContract) -> Draw:
        import torch

        seed = self.exp.correctness.seed if self.exp.correctness.seed is not None else corr.fresh_seed()
        with self._phase("inputs_refs_s"):
            draw = draw_inputs(fixture, p, contract, seed)
            torch.cuda.synchronize()  # the references' GPU time counted here, not in the first check
        return draw

    def _check_one(self, impl, row, ext, draw, contract, k, fixture, *, emit: Emit | None = None,
                   stage: Stage | None = None) -> Prepared | None:
        """Prepare, poison, launch once, check. Returns the Prepared on PASS, None after emitting a row (to
        `emit`, default the executor's; `stage` likewise takes the stage reports: a tuned row's race keeps a
        candidate's FAIL out of the run and reports under the tuned row's name)."""
        import torch

        emit = self.emit if emit is None else emit
        stage = self.stage if stage is None else stage
        stage(impl.name, f"check {fixture}")
        try:
            prepared = impl.prepare(row_problem(row), contract, draw.operands, ext)
            inputs_before = draw.fingerprint()
            if prepared.executed_flops:
                row.executed_flops = prepared.executed_flops
            if prepared.build_seconds is not None:  # compiled in prepare (Python rows), not by the builder
                row.build_seconds = prepared.build_seconds
            row.add_note(prepared.notes)
            # One unchecked launch first: the first launch of a kernel loads its module (CUDA's lazy
            # loading), which waits for the device to be idle and would hide the test below.
            prepared.launch()
            wait_stream(self.exp.timing.row_timeout_s, impl.name)
            torch.cuda.synchronize()
            # A sleep ahead of the poison: work the implementation enqueues on any other stream is not
            # held back by it, runs before the poison lands, and leaves NaN where the result should be.
            torch.cuda._sleep(int(OTHER_STREAM_GUARD_MS * 2.0e6))
            prepared.poison()
            prepared.launch()
            wait_stream(self.exp.timing.row_timeout_s, impl.name)
            # What the harness's stream holds now, against what the whole device holds once idle: a
            # difference means work was done outside the stream the harness gave it.
            snapshot = prepared.output().clone()
            torch.cuda.synchronize()
        except TimeoutError as exc:
            raise ContextLost(str(exc), impl.name, Status.TIMEOUT) from exc
        except Exception as exc:  # noqa: BLE001 - the implementation's failure is its row
            self._crash(row, exc, "launch", emit)
            return None
        out = prepared.output()
        if not draw.unchanged_since(inputs_before):
            draw.restore()  # the next implementations must see the inputs the references were made from
            row.status = Status.FAIL
            row.reason = f"{fixture}: the implementation wrote into its input matrices"
            emit(row)
            return None
        if not same_bits(snapshot, out):
            row.status = Status.FAIL
            row.reason = (f"{fixture}: the output changed after the harness's stream had finished: the "
                          f"implementation does (part of) its work on another stream")
            emit(row)
            return None
        check = corr.check_output(out, draw.refs, contract, self.exp.correctness, k, fixture, draw.seed)
        row.checks.append(check.as_dict())
        _merge_errors(row, check)
        if not check.passed:
            row.status = Status.FAIL
            row.reason = f"{fixture} (seed {draw.seed}): {check.message}"
            emit(row)
            return None
        return prepared

    def _crash(self, row: Result, exc: BaseException, stage: str, emit: Emit | None = None) -> None:
        import torch

        row.status, row.reason = Status.CRASH, f"{stage}: {exc}".strip()
        try:
            torch.cuda.synchronize()
        except Exception as sticky:  # noqa: BLE001 - the context is gone: the worker must be replaced
            raise ContextLost(f"{stage}: {sticky}", row.implementation) from exc
        (self.emit if emit is None else emit)(row)

    # -- timing ------------------------------------------------------------------------------------
    def _time(self, alive, fixtures, contract: PrecisionContract, p: GemmProblem) -> None:
        """Time every implementation that passed, interleaved, on a fresh draw of the timing fixture
        (new seed, new poisoned output buffers: a kernel that replays a cached result cannot pass)."""
        from ..contracts.launch_window import launch_window
        from ..contracts.timing import Timer

        timing_fixture = next((f for f in fixtures if f in ("uniform", "normal")), fixtures[0])
        draw = self._draw(timing_fixture, p, contract)
        ready = [t for t in (self._timed(impl, row, ext, draw, contract) for impl, row, ext in alive) if t is not None]
        # telemetry while each batch runs (after its sleep gate): the clock and caps the samples saw
        tele: dict[str, list] = {t.impl.name: [] for t in ready}
        window = launch_window(self.device.name, self.exp.timing.launch_window_us)
        def in_batch(name: str) -> None:
            with self._phase("telemetry_s"):
                tele[name].append(self.telemetry.sample())

        timer = Timer(self.exp.timing, self.device.l2_bytes, in_batch=in_batch, launch_window_ms=window.ms,
                      phase=self._phase)
        measurements = timer.measure([t.launcher for t in ready], stage=self.stage)
        for t in ready:  # a hang or CUDA error: blame the implementation that caused it
            m = measurements[t.impl.name]
            if m.fatal:
                status = Status.TIMEOUT if isinstance(m.error, TimeoutError) else Status.CRASH
                raise ContextLost(f"timing: {m.error}", t.impl.name, status)
        energy = self._energy([t.launcher for t in ready], measurements, timer)
        peak = peak_tflops(self.device, contract)
        finished: dict[str, Result] = {}
        for t in ready:
            m = measurements[t.impl.name]
            t.row.timing = {**timer.describe(), "stop_reason": m.stop_reason, "warmup_launches": m.warmup_launches,
                            "batches": m.batches, "starved_batches": m.starved_batches, "sleep_ms": m.sleep_ms,
                            # the problem's batch when cut to fit CUDA's launch queue (contracts/timing.py)
                            **({"batch": m.batch_size, "batch_setting": timer.s.batch, "batch_why": m.batch_note}
                               if m.batch_size else {}),
                            **({"batch_restarts": m.restarts} if m.restarts else {}),
                            "rotation_copies": 1 + len(t.copies), "timing_seed": draw.seed,
                            "storage": t.prepared.storage_info, **_method_fields(m, window),
                            **(t.prepared.timing_fields or {}),
                            **({"tuning": t.impl.tuning.as_dict()} if isinstance(t.impl, Picked) else {})}
            t.row_energy = energy
            if self._conclude(t, m, tele[t.impl.name], draw, contract, p, peak):
                finished[t.impl.name] = t.row
        self._derive(finished, contract, peak)
        attach_predictions(finished.values(), self.device)  # the model's time beside the measured one
        for t in ready:
            if t.impl.name in finished:
                self.emit(t.row)

    def _energy(self, launchers, measurements, timer):
        """(source, name -> EnergyRun) of the energy batches after timing (contracts/energy_meter.py); None when the
        spec turns them off. A hang or CUDA error in one is blamed on its implementation, as in timing."""
        from ..contracts.energy_meter import EnergyFailure, measure_energy

        if self.exp.timing.energy_batches <= 0:
            return None
        try:
            with self._phase("energy_s"):
                # the sleep rate of the timer (cycles per ms) gates the energy batches as it gates the time batches
                return measure_energy(launchers, measurements, self.exp.timing, self.telemetry, timer.cycles_per_ms,
                                      stage=self.stage)
        except EnergyFailure as exc:
            status = Status.TIMEOUT if isinstance(exc.error, TimeoutError) else Status.CRASH
            raise ContextLost(str(exc), exc.name, status) from exc

    def _timed(self, impl, row, ext, draw: Draw, contract) -> "_Timed | None":
        """Prepare one implementation for timing (and its rotation copies); None after a CRASH row."""
        from ..contracts.timing import Launcher

        self.stage(impl.name, "prepare timing")
        try:
            prepared = impl.prepare(row_problem(row), contract, draw.operands, ext)
            prepared.poison()
        except Exception as exc:  # noqa: BLE001
            self._crash(row, exc, "prepare for timing")
            return None
        copies, flush_instead = [], False
        if self.exp.timing.l2 == "rotate":
            copies, flush_instead = self._rotation_copies(impl, row, ext, draw.operands, contract)
        if flush_instead:
            row.add_note(f"rotate would need more than {MAX_ROTATION_COPIES} input copies of this problem to "
                         f"cover 2x L2: L2 was flushed before each sample instead")
        resets = [c.reset_output for c in (prepared, *copies)] if contract.beta != 0.0 else None
        launcher = Launcher(impl.name, prepared.launch, [c.launch for c in copies], resets, flush_instead,
                            kernels=prepared.kernels_per_launch)
        return _Timed(impl, row, prepared, copies, launcher)

    def _conclude(self, t: "_Timed", m, telemetry: list, draw: Draw, contract, p: GemmProblem, peak) -> bool:
        """Fill a timed row from its measurement and re-check its output; False after a CRASH row."""
        from ..telemetry import at_max_clock, summarize_samples

        row = t.row
        tsum = summarize_samples(telemetry)
        row.telemetry, row.throttled_fraction = tsum, tsum.get("throttled_fraction")
        row.sm_clock_mhz, row.max_sm_clock_mhz = tsum.get("sm_clock_mhz_median"), self._max_clock()
        if m.error is not None:
            self._crash(row, m.error, "timing")
            return False
        if not m.samples_ms:
            row.status, row.reason = Status.CRASH, f"no valid timing samples: {m.stop_reason}"
            self.emit(row)
            return False
        s = m.summary()
        row.samples_ms = list(m.samples_ms)
        row.median_ms, row.mean_ms, row.min_ms, row.max_ms = s.median, s.mean, s.min, s.max
        row.stdev_ms, row.cv, row.iqr_ms, row.median_ci_rel, row.n_samples = s.stdev, s.cv, s.iqr, s.median_ci_rel, s.n
        row.timing_method = m.method
        if m.method_note:
            row.add_note(m.method_note)
        row.median_ms_at_max_clock = at_max_clock(s.median, row.sm_clock_mhz, row.max_sm_clock_mhz)
        # a problem of no work (every group empty) can launch nothing: a median of 0 ms has no rate
        row.tflops = row.flops / (s.median * 1e-3) / 1e12 if s.median > 0 else None
        _attach_energy(row, t.row_energy)
        if row.executed_flops and s.median > 0:
            row.executed_tflops = row.executed_flops / (s.median * 1e-3) / 1e12
        row.status = Status.PASS
        if (row.throttled_fraction or 0) > THROTTLED_MAJORITY:
            row.add_note(f"THROTTLED: {row.throttled_fraction:.0%} of telemetry samples saw a power or thermal cap "
                         f"({', '.join(tsum.get('reasons_seen', []))})")
        if self.exp.correctness.check_timed_output:
            with self._phase("recheck_s"):
                self._recheck(t, m.last_index, draw, contract, p)
        if row.status is Status.PASS and peak and row.tflops > IMPLAUSIBLE_PEAK_FACTOR * peak:
            row.status = Status.FAIL
            row.reason = (f"implausible: {row.tflops:.1f} TFLOP/s is above the device's peak of {peak:g} for "
                          f"this contract; the timed launches cannot have done the work on the harness's stream")
        return True

    def _max_clock(self) -> float | None:
        if not hasattr(self, "_max_sm_clock"):
            fn = getattr(self.telemetry, "max_sm_clock_mhz", None)
            self._max_sm_clock = fn() if fn else None
        return self._max_sm_clock

    def _recheck(self, t: "_Timed", last_index: int, draw: Draw, contract, p: GemmProblem) -> None:
        """The output of the last timed launch (whichever input copy it ran on), checked again, and one
        more launch into a poisoned output: a stale or replayed result cannot pass."""
        row = t.row
        last = (t.prepared, *t.copies)[last_index]
        check = corr.check_output(last.output(), draw.refs, contract, self.exp.correctness, p.k,
                                  "timed_output", draw.seed)
        row.checks.append(check.as_dict())
        if not check.passed:
            row.status, row.reason = Status.FAIL, f"output of the last timed launch: {check.message}"
            return
        final = self._final_launch(t.impl, t.prepared, draw, contract, p)
        row.checks.append(final.as_dict())
        if not final.passed:
            row.status = Status.FAIL
            row.reason = f"a fresh launch after timing, into a poisoned output: {final.message}"

    def _final_launch(self, impl, prepared, draw, contract, p) -> corr.CheckResult:
        self.stage(impl.name, "final launch")
        try:
            prepared.poison()
            prepared.launch()
            wait_stream(self.exp.timing.row_timeout_s, impl.name)
        except TimeoutError as exc:
            raise ContextLost(str(exc), impl.name, Status.TIMEOUT) from exc
        return corr.check_output(prepared.output(), draw.refs, contract, self.exp.correctness, p.k,
                                 "final_launch", draw.seed)

    def _rotation_copies(self, impl, row, ext, operands, contract):
        """Extra prepared copies over cloned inputs, so that the copies total at least 2x L2. Returns
        (copies, flush_instead): a problem too small to rotate within MAX_ROTATION_COPIES is flushed."""
        count = rotation_copies(row.unique_bytes or 1, self.device.l2_bytes)
        if count is None:
            return [], True
        copies = []
        for _ in range(count):
            copy = impl.prepare(row_problem(row), contract, operands.clone(), ext)
            copy.poison()
            copies.append(copy)
        return copies, False

    def _derive(self, rows: dict[str, Result], contract: PrecisionContract, peak: float | None) -> None:
        """% of the same-run baseline (same problem, same contract) and % of the device's peak."""
        name = self.exp.baseline_for(contract.name)
        base = rows.get(name) if name else None
        for row in rows.values():
            if base is not None and base.status is Status.PASS and row.median_ms:
                row.baseline = base.implementation
                row.pct_of_baseline = 100.0 * base.median_ms / row.median_ms
            if peak and row.tflops is not None:
                row.peak_tflops = peak
                row.pct_of_peak = 100.0 * row.tflops / peak


def _method_fields(m, window) -> dict[str, Any]:
    """Both methods' medians (whichever the row reports; CUPTI's as the raw span), and the launch window a
    CUPTI figure adds, for the row's timing receipt."""
    import statistics

    out: dict[str, Any] = {"timing_method": m.method}
    if m.method == "cupti":
        out["launch_window_ms"], out["launch_window"] = window.ms, window.note()
    if m.event_samples_ms:
        out["event_median_ms"] = statistics.median(m.event_samples_ms)
    cupti = [x for x in (m.cupti_samples_ms or []) if x is not None]
    if cupti:
        out["cupti_median_ms"] = statistics.median(cupti)
        out["cupti_samples"] = len(cupti)
    if m.method == "cupti":  # the event samples are kept beside CUPTI's, for comparing the methods
        out["event_samples_ms"] = list(m.event_samples_ms)
    if m.method_note:
        out["method_note"] = m.method_note
    return out


def _attach_energy(row: Result, energy) -> None:
    """The row's energy fields from its energy batches (contracts/energy.py), with the clocks they ran under."""
    from ..contracts.energy import summarize_energy
    from ..contracts.energy_meter import L2_NOTE, SAME_LENGTH
    from ..telemetry import summarize_samples

    if energy is None:
        return
    source, runs = energy
    run = runs.get(row.implementation)
    if run is None:
        return
    fields = summarize_energy(run.batches, row.flops, source, summarize_samples(run.telemetry), note=run.note,
                              warmup=run.warmup)
    fields["energy"]["l2"] = L2_NOTE
    fields["energy"]["batch_length"] = SAME_LENGTH  # the rule: a row's figure is comparable with its neighbours'
    for key, value in fields.items():
        setattr(row, key, value)


def _merge_errors(row: Result, check: corr.CheckResult) -> None:
    for attr in ("max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig", "worst_bound_ratio"):
        new = getattr(check, attr)
        old = getattr(row, attr)
        setattr(row, attr, new if old is None else max(old, new))
