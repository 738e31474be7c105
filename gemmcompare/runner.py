"""The runner: spec -> plan -> build -> per problem (inputs once, references once) -> each implementation
checked, then all timed interleaved -> result rows, written to the store as they are produced.
"""

from __future__ import annotations

import datetime as dt
import math
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .build.extension import BuildFailure, LoadedExtension, build_extensions, plan_extensions
from .contracts import correctness as corr
from .contracts.precision import PrecisionContract
from .device import DeviceInfo, parse_arch, probe_device
from .dtypes import DTYPE_INFO
from .errors import GemmCompareError, NoDeviceError
from .implementations.base import Implementation, Operands, Prepared
from .results import Result, Status
from .spec import Experiment, ProblemEntry
from .store import RunFolder, Store


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunOptions:
    store: Path = Path("gemmcompare.db")
    runs_dir: Path = Path("runs")
    cache_dir: Path | None = None
    arch: str | None = None  # compile target when there is no device (e.g. sm_90a)
    resume: str | None = None
    jobs: int | None = None
    progress: bool = True
    build_only: bool = False


@dataclass
class BuildOutcome:
    by_impl: dict[str, LoadedExtension | BuildFailure] = field(default_factory=dict)
    target_cc: int = 90


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    rows: list[Result]
    status: str


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Building


def build_for(exp: Experiment, device: DeviceInfo | None, opts: RunOptions) -> BuildOutcome:
    """Build every implementation that has at least one runnable row. Failures are kept per
    implementation (they become BUILD_ERROR rows); the rest go on."""
    if device is not None:
        target_cc = device.cc_int
    elif opts.arch:
        target_cc = parse_arch(opts.arch)[0]
    else:
        target_cc = 90
    outcome = BuildOutcome(target_cc=target_cc)
    wanted: list[tuple[Implementation, Any]] = []
    for impl in exp.implementations:
        if not impl.supports_device(device):
            continue
        if not any(impl.supports(p.problem, c) for p in exp.problems for c in exp.contracts):
            continue
        if device is None and impl.min_cc > target_cc:
            continue
        req = impl.build_request(impl.target_arch(target_cc))
        if req is not None:
            wanted.append((impl, req))
    if not wanted:
        return outcome
    plans = plan_extensions([r for _, r in wanted])
    by_key = {p.module_name: p for p in plans}
    built = build_extensions(plans, cache_dir=opts.cache_dir, jobs=opts.jobs, progress=opts.progress)
    for impl, req in wanted:
        for name, plan in by_key.items():
            if req.merge_key == (plan.group, plan.arch, plan.cuda_flags, plan.include_dirs, plan.uses_cutlass, plan.link_flags):
                outcome.by_impl[impl.name] = built[name]
    return outcome


# ---------------------------------------------------------------------------------------------------
# Running


class ContextLost(GemmCompareError):
    """A kernel left the CUDA context unusable (illegal address, trap): nothing more can run in it."""


class Runner:
    def __init__(self, exp: Experiment, opts: RunOptions):
        self.exp, self.opts = exp, opts
        self.device = probe_device()
        self.store: Store | None = None
        self.folder: RunFolder | None = None
        self.rows: list[Result] = []

    def run(self) -> RunOutcome:
        exp, opts = self.exp, self.opts
        builds = build_for(exp, self.device, opts)
        failures = [(n, b) for n, b in builds.by_impl.items() if isinstance(b, BuildFailure)]
        for name, failure in failures:
            log(f"BUILD_ERROR {name}:\n{failure.message}")
        if self.device is None:
            ok = sum(1 for b in builds.by_impl.values() if isinstance(b, LoadedExtension))
            raise NoDeviceError(
                f"spec {exp.path} is valid and {ok} extension(s) built ({len(failures)} failed) for "
                f"sm_{builds.target_cc}, but no CUDA device is present: nothing can be measured on this machine."
            )
        if opts.build_only:
            return RunOutcome("", Path(), [], "built")
        import torch

        from .receipt import environment
        from .telemetry import Telemetry

        self.telemetry = Telemetry(self.device.index)
        receipt = environment(self.device, self.telemetry.driver_version())
        receipt.update({
            "spec": exp.path, "spec_name": exp.name, "spec_hash": exp.spec_hash,
            "contracts": {c.name: c.describe() for c in exp.contracts},
            "tolerance_rule": corr.tolerance_formula(),
            "tolerances": {d.value: vars(t) for d, t in corr.TOLERANCES.items()},
            "correctness": vars(exp.correctness),
            "timing": exp.timing.as_dict(),
            "baseline": exp.baseline,
        })
        self.store = Store(opts.store)
        done: set = set()
        if opts.resume:
            prev = self.store.find_run(opts.resume)
            if prev is None:
                raise GemmCompareError(f"--resume {opts.resume}: no such run in {opts.store}")
            if prev["spec_hash"] != exp.spec_hash:
                raise GemmCompareError(f"--resume {prev['run_id']}: that run used a different spec "
                                       f"(hash {prev['spec_hash'][:12]} vs {exp.spec_hash[:12]}); start a new run")
            run_id = prev["run_id"]
            done = self.store.done_keys(run_id)
            self.store.set_run_status(run_id, "running")
            run_dir = Path(prev["run_dir"])
            log(f"resuming run {run_id}: {len(done)} rows already done")
        else:
            run_id = dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
            run_dir = opts.runs_dir / run_id
            self.store.create_run({
                "run_id": run_id, "name": exp.name, "spec_path": exp.path, "spec_hash": exp.spec_hash,
                "status": "running", "started_at": now(), "gpu": self.device.name, "cc": receipt["compute_capability"],
                "git_commit": receipt["git_commit"], "git_dirty": receipt["git_dirty"],
                "gemmcompare_version": receipt["gemmcompare"], "run_dir": str(run_dir), "receipt": receipt,
                "spec_text": exp.text,
            })
        self.folder = RunFolder(run_dir)
        self.folder.write_receipt({"run_id": run_id, **receipt})
        self.run_id = run_id
        self.builds = builds
        status = "complete"
        total = len(exp.problems) * len(exp.contracts) * len(exp.implementations) - len(done)
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="rows", unit="row", disable=not opts.progress, file=sys.stderr, dynamic_ncols=True)
        try:
            for entry in exp.problems:
                for contract in exp.contracts:
                    todo = [i for i in exp.implementations if (entry.label, contract.name, i.name) not in done]
                    if todo:
                        self._problem(entry, contract, todo)
                        torch.cuda.empty_cache()
        except KeyboardInterrupt:
            status = "interrupted"
            log(f"interrupted: {len(self.rows)} rows kept; continue with --resume {run_id}")
        except ContextLost as exc:
            status = "failed"
            log(f"run stopped: {exc}")
        finally:
            self.bar.close()
            self.store.set_run_status(run_id, status, now())
        return RunOutcome(run_id, run_dir, self.rows, status)

    # -- one problem under one contract ------------------------------------------------------------
    def _base_row(self, entry: ProblemEntry, contract: PrecisionContract, impl: Implementation) -> Result:
        p = entry.problem
        return Result(
            run_id=self.run_id, problem=p.label, m=p.m, n=p.n, k=p.k, batch=p.batch, contract=contract.name,
            implementation=impl.name, family=impl.family, params=dict(impl.params), status=Status.SKIP,
            is_baseline=impl.name == self.exp.baseline, flops=p.flops, started_at=now(),
            unique_bytes=p.unique_bytes(DTYPE_INFO[contract.a].itemsize, DTYPE_INFO[contract.b].itemsize,
                                        DTYPE_INFO[contract.c].itemsize),
            tolerance=corr.describe_tolerance(self.exp.correctness, contract, p.k),
        )

    def _emit(self, row: Result) -> None:
        row.finished_at = now()
        self.store.add_result(row)
        self.folder.add(row)
        self.rows.append(row)
        self.bar.update(1)

    def _problem(self, entry: ProblemEntry, contract: PrecisionContract, impls: list[Implementation]) -> None:
        import torch

        exp, p = self.exp, entry.problem
        self.bar.set_postfix_str(f"{p.label} {contract.name}")
        runnable: list[tuple[Implementation, Result, LoadedExtension | None]] = []
        need = _estimate_bytes(p, contract, len(impls))
        free = torch.cuda.mem_get_info(self.device.index)[0]
        for impl in impls:
            row = self._base_row(entry, contract, impl)
            s = impl.check(p, contract, self.device)
            if not s:
                row.reason = s.reason
                self._emit(row)
                continue
            if need > 0.9 * free:
                row.reason = f"needs about {need / 2**30:.1f} GiB of device memory, {free / 2**30:.1f} GiB free"
                self._emit(row)
                continue
            ext = self.builds.by_impl.get(impl.name)
            if isinstance(ext, BuildFailure):
                row.status, row.reason = Status.BUILD_ERROR, ext.message
                row.build_seconds = ext.seconds
                self._emit(row)
                continue
            if ext is not None:
                res = ext.resources_for(getattr(impl, "kernel_filter", ""))
                row.registers, row.smem_bytes = res.get("registers"), res.get("smem_bytes")
                row.spill_stores, row.spill_loads = res.get("spill_stores"), res.get("spill_loads")
                row.stack_bytes = res.get("stack_bytes")
                row.arch, row.build_flags, row.build_seconds = ext.plan.arch, ext.plan.cuda_flags_full(), ext.build_seconds
            runnable.append((impl, row, ext))
        if not runnable:
            return

        fixtures = entry.fixtures or exp.correctness.fixtures
        timing_fixture = next((f for f in fixtures if f in ("uniform", "normal")), fixtures[0])
        timed: dict[str, tuple[Prepared, Operands, corr.References, int]] = {}
        alive = list(runnable)
        for fixture in fixtures:
            seed = exp.correctness.seed if exp.correctness.seed is not None else corr.fresh_seed()
            originals = corr.make_inputs(fixture, p.m, p.n, p.k, contract, seed, "cuda")
            rounded = {"a": corr.round_to(originals["a"], contract.a), "b": corr.round_to(originals["b"], contract.b)}
            if "c0" in originals:
                rounded["c0"] = corr.round_to(originals["c0"], contract.c)
            refs = corr.compute_references(originals, rounded, contract)
            operands = Operands(rounded["a"], rounded["b"], rounded.get("c0"), originals.get("bias"))
            still = []
            for impl, row, ext in alive:
                result = self._check_one(impl, row, ext, operands, refs, contract, p.k, fixture, seed)
                if result is None:  # failed or crashed: row already emitted
                    continue
                prepared = result
                if fixture == timing_fixture and entry.time:
                    timed[impl.name] = (prepared, operands, refs, seed)
                else:
                    del prepared
                still.append((impl, row, ext))
            alive = still
            del originals, rounded
        if entry.time and alive:
            self._time(alive, timed, contract, p)
        else:
            for impl, row, _ in alive:
                row.status = Status.PASS
                row.notes = (row.notes + "; " if row.notes else "") + "correctness only (time: false)"
                self._emit(row)

    def _check_one(self, impl, row, ext, operands, refs, contract, k, fixture, seed):
        """Prepare, poison, launch once, check. Returns the Prepared on PASS, None after emitting a row."""
        import torch

        try:
            prepared = impl.prepare(row_problem(row), contract, operands, ext)
            if prepared.executed_flops:
                row.executed_flops = prepared.executed_flops
            if prepared.notes and prepared.notes not in row.notes:
                row.notes = prepared.notes
            prepared.poison()
            prepared.launch()
            _wait(self.exp.timing.row_timeout_s, impl.name)
        except TimeoutError as exc:
            row.status, row.reason = Status.TIMEOUT, str(exc)
            self._emit(row)
            raise ContextLost(f"{impl.name} did not finish; the device is still busy with it") from exc
        except Exception as exc:  # noqa: BLE001 - the implementation's failure is a row
            self._crash(row, exc, "launch")
            return None
        check = corr.check_output(prepared.output(), refs, contract, self.exp.correctness, k, fixture, seed)
        row.checks.append(check.as_dict())
        _merge_errors(row, check)
        if not check.passed:
            row.status = Status.FAIL
            row.reason = f"{fixture} (seed {seed}): {check.message}"
            self._emit(row)
            return None
        return prepared

    def _crash(self, row: Result, exc: BaseException, stage: str) -> None:
        import torch

        row.status, row.reason = Status.CRASH, f"{stage}: {exc}".strip()
        self._emit(row)
        try:
            torch.cuda.synchronize()
        except Exception as sticky:  # noqa: BLE001
            raise ContextLost(f"{row.implementation} left the CUDA context unusable ({sticky}); the remaining "
                              f"rows need a fresh process (run again with --resume)") from exc

    def _time(self, alive, timed, contract, p) -> None:
        from .contracts.timing import Launcher, Timer
        from .telemetry import summarize_samples

        timer = Timer(self.exp.timing, self.device.l2_bytes)
        launchers, copies_of = [], {}
        for impl, row, ext in alive:
            prepared, operands, refs, seed = timed[impl.name]
            copies = []
            if self.exp.timing.l2 == "rotate":
                copies = self._rotation_copies(impl, row, ext, prepared, operands, contract)
                copies_of[impl.name] = copies
            before = prepared.reset_output if contract.beta != 0.0 else None
            launchers.append(Launcher(impl.name, prepared.launch, [c.launch for c in copies], before))
        tele: dict[str, list] = {impl.name: [] for impl, _, _ in alive}
        original_run_batch = timer.run_batch

        def run_batch(launcher, m, count, graph=None):  # telemetry after every batch
            original_run_batch(launcher, m, count, graph)
            tele[launcher.name].append(self.telemetry.sample())

        timer.run_batch = run_batch
        for impl, _, _ in alive:
            tele[impl.name].append(self.telemetry.sample())
        measurements = timer.measure(launchers)
        rows_by_name = {}
        for impl, row, ext in alive:
            m = measurements[impl.name]
            prepared, operands, refs, seed = timed[impl.name]
            row.timing = {**timer.describe(), "stop_reason": m.stop_reason, "warmup_launches": m.warmup_launches,
                          "batches": m.batches, "starved_batches": m.starved_batches, "sleep_ms": m.sleep_ms,
                          "rotation_copies": 1 + len(copies_of.get(impl.name, []))}
            tsum = summarize_samples(tele[impl.name])
            row.telemetry = tsum
            row.throttled_fraction = tsum.get("throttled_fraction")
            if m.error is not None:
                try:
                    self._crash(row, m.error, "timing")
                except ContextLost:
                    raise
                continue
            if not m.samples_ms:
                row.status, row.reason = Status.CRASH, f"no valid timing samples: {m.stop_reason}"
                self._emit(row)
                continue
            s = m.summary()
            row.samples_ms = list(m.samples_ms)
            row.median_ms, row.mean_ms, row.min_ms, row.max_ms = s.median, s.mean, s.min, s.max
            row.stdev_ms, row.cv, row.iqr_ms, row.median_ci_rel, row.n_samples = s.stdev, s.cv, s.iqr, s.median_ci_rel, s.n
            row.tflops = row.flops / (s.median * 1e-3) / 1e12
            if row.executed_flops:
                row.executed_tflops = row.executed_flops / (s.median * 1e-3) / 1e12
            row.status = Status.PASS
            if self.exp.correctness.check_timed_output:  # the output of the last timed launch, re-checked
                check = corr.check_output(prepared.output(), refs, contract, self.exp.correctness, p.k,
                                          "timed_output", seed)
                check_rec = check.as_dict()
                row.checks.append(check_rec)
                if not check.passed:
                    row.status = Status.FAIL
                    row.reason = f"output of the last timed launch: {check.message}"
            rows_by_name[impl.name] = row
        self._derive(rows_by_name, contract)
        for impl, row, _ in alive:
            if impl.name in rows_by_name:
                self._emit(row)

    def _rotation_copies(self, impl, row, ext, prepared, operands, contract):
        """Extra prepared copies over cloned inputs so that the copies total at least 2x L2."""
        per = max(1, row.unique_bytes or 1)
        count = min(63, max(0, math.ceil(2 * self.device.l2_bytes / per) - 1))
        copies = []
        for _ in range(count):
            ops = Operands(operands.a.clone(), operands.b.clone(),
                           None if operands.c0 is None else operands.c0.clone(),
                           None if operands.bias is None else operands.bias.clone())
            copies.append(impl.prepare(row_problem(row), contract, ops, ext))
        return copies

    def _derive(self, rows: dict[str, Result], contract: PrecisionContract) -> None:
        """% of the same-run baseline (same problem, same contract) and % of the device's peak."""
        base = rows.get(self.exp.baseline) if self.exp.baseline else None
        peak = _peak(self.device, contract)
        for row in rows.values():
            if base is not None and base.status is Status.PASS and row.median_ms:
                row.baseline = base.implementation
                row.pct_of_baseline = 100.0 * base.median_ms / row.median_ms
            if peak and row.tflops is not None:
                row.peak_tflops = peak
                row.pct_of_peak = 100.0 * row.tflops / peak


def row_problem(row: Result):
    from .problems import GemmProblem

    return GemmProblem(row.m, row.n, row.k, row.batch)


def _merge_errors(row: Result, check: corr.CheckResult) -> None:
    for attr in ("max_abs_err", "max_rel_err", "max_abs_err_orig", "max_rel_err_orig", "worst_bound_ratio"):
        new = getattr(check, attr)
        old = getattr(row, attr)
        setattr(row, attr, new if old is None else max(old, new))


def _wait(timeout_s: float, name: str) -> None:
    import torch

    ev = torch.cuda.Event()
    ev.record()
    deadline = time.perf_counter() + timeout_s
    while not ev.query():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{name}: no completion within {timeout_s:g} s")
        time.sleep(0.0005)


def _estimate_bytes(p, contract: PrecisionContract, n_impls: int) -> int:
    """Device memory one (problem, contract) needs: FP32 originals, rounded inputs, two FP64 references
    and the magnitude term, plus an output and an input layout per implementation."""
    mk, kn, mn = p.m * p.k, p.k * p.n, p.m * p.n
    ia, ic = DTYPE_INFO[contract.a].itemsize, DTYPE_INFO[contract.c].itemsize
    return 4 * (mk + kn) + ia * (mk + kn) * 3 + 8 * 3 * mn + n_impls * mn * ic + 8 * 2 * 2048 * p.n


def _peak(device: DeviceInfo, contract: PrecisionContract) -> float | None:
    try:
        from .peaks import peak_for
    except ImportError:
        return None
    try:
        found = peak_for(device.name, contract.as_dict())
    except Exception:  # noqa: BLE001
        return None
    return found[0] if found else None
