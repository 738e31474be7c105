"""The parent process of a run: plan -> build -> store and run folder -> measuring workers, fed whole
groups (problem x contract) -> rows written to the store as they arrive.

Everything is built first, on this machine's CPUs (build/experiment.py), so no GPU waits on nvcc. Then
one isolated worker per GPU measures (worker.py; its parent end is gpu_session.py): on this host's GPUs
through pool.py (`--gpus`), or on a Dask cluster's GPU workers through engine_dask.py (`--cluster`).
Either way a group is measured on one GPU with its baseline, rows come back here, and only this process
writes the store. `--shard I/N` measures one deterministic part of the plan (shards.py), for runs made
apart and joined by `gemmcompare merge`. With `isolate=False` (--in-process) the executor runs here.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..build.experiment import ExperimentBuilds, build_experiment
from ..build.extension import LoadedExtension
from ..contracts import correctness as corr
from ..device import DeviceInfo
from ..errors import GemmCompareError, NoDeviceError, UsageError
from ..files import writable_dir
from ..interrupts import first_interrupt_only
from ..plan import Group, Plan, make_plan
from ..results import Result
from ..spec import Experiment
from ..store import DEFAULT_STORE, RunFolder, Store, new_run_id
from .gpu_session import SILENCE_MARGIN_S, SessionLost
from .gpus import GpuChoice
from .messages import BuiltExtensionRef, MeasureJob, WorkerSetup
from .phases import Phases, process_age_s
from .rows import ContextLost, now


@dataclass
class RunOptions:
    store: Path = Path(DEFAULT_STORE)
    runs_dir: Path = Path("runs")
    cache_dir: Path | None = None
    arch: str | None = None  # compile target when there is no device (e.g. sm_90a)
    resume: str | None = None
    jobs: int | None = None
    progress: bool = True
    lines: bool = False  # no bars, but a line on stderr per extension built and per row measured (a log, --no-progress)
    isolate: bool = True  # measure in a worker process (replaced after a crash or hang)
    gpus: str | None = None  # --gpus all | 0,1: one worker per GPU (default: GPU 0 alone)
    cluster: str | None = None  # --cluster ADDRESS | local: the groups go to a Dask cluster's GPU workers
    shard: str | None = None  # --shard I/N: this run measures one part of the plan
    silence_margin_s: float = SILENCE_MARGIN_S  # how long past the row timeout a silent worker is given
    backend: str | None = None  # the workers' device session (default worker.CudaSession; tests: a fake)
    report_after: bool = False  # a report follows the run: its libraries are imported while the GPUs measure


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    rows: list[Result]
    status: str  # complete, interrupted or failed


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_for(exp: Experiment, device, opts: RunOptions) -> ExperimentBuilds:
    if opts.lines:  # a line per extension as it is built, then the build's line (a log shows how far it got)
        from ..build.experiment import build_in_steps
        from ..progress import Progress

        return build_in_steps(exp, device, Progress(bars=False), arch=opts.arch, cache_dir=opts.cache_dir,
                              jobs=opts.jobs)
    return build_experiment(exp, device, arch=opts.arch, cache_dir=opts.cache_dir, jobs=opts.jobs,
                            progress=opts.progress)


def _prestart(exp: Experiment, opts: RunOptions, gpus: list[GpuChoice] | None) -> dict:
    """Measuring workers started now, before the plan, the GPU probe and the build cache are looked at, so
    that their start-up (torch, CUDA, cuBLAS, CUPTI: seconds) overlaps this process's: by
    CUDA_VISIBLE_DEVICES value, for the GPUs `--gpus` names by index (GPU 0 by default) on this host. None
    where that needs torch to know (`--gpus all`), for a cluster, and where NVML sees no GPU (nothing to
    measure on: a build-only machine spawns nothing)."""
    from .gpus import nvml_visible_gpu, visible_entry
    from .messages import WorkerSetup
    from .worker import WorkerHandle, wants_cupti

    wanted = (opts.gpus or "0").replace(" ", "")
    if not opts.isolate or opts.cluster or not all(part.isdigit() for part in wanted.split(",")):
        return {}
    if gpus is None and nvml_visible_gpu() is None:
        return {}
    visible = []
    for index in dict.fromkeys(int(part) for part in wanted.split(",")):
        try:
            visible.append(next(g.visible for g in gpus if g.index == index) if gpus is not None
                           else visible_entry(index))
        except (StopIteration, IndexError):
            continue  # select_gpus will say what is wrong with it
    backend = opts.backend or WorkerSetup.__dataclass_fields__["backend"].default
    return {v: WorkerHandle.prestart(v, backend, wants_cupti(exp)) for v in visible}


def _pool(opts: RunOptions, gpus: list[GpuChoice] | None, prestarted: dict | None = None):
    """Where the groups are measured: this host's GPUs, or a Dask cluster's workers."""
    from .gpus import local_gpus, select_gpus

    if opts.cluster and opts.cluster != "local" and opts.gpus:
        raise UsageError("--gpus picks this host's GPUs; with --cluster ADDRESS the cluster's workers decide "
                         "(--gpus goes with --cluster local)")
    if opts.cluster and opts.cluster != "local":
        from .engine_dask import DaskPool

        return DaskPool(opts.cluster, silence_margin_s=opts.silence_margin_s, log=log)
    available = local_gpus() if gpus is None else gpus
    wanted = opts.gpus or ("all" if opts.cluster else "0")
    chosen = select_gpus(wanted, available)
    if opts.cluster:
        from .engine_dask import DaskPool

        return DaskPool("local", chosen, silence_margin_s=opts.silence_margin_s, log=log)
    from .pool import LocalPool

    return LocalPool(chosen, opts.silence_margin_s, log=log, prestarted=prestarted)


class Runner:
    """The parent side of a run: builds, the store and the run folder, and the measuring workers.

    `device` and `gpus` are what this host has, found with torch unless given (the tests give a fake).
    `phases` may hold what the caller already spent (runner/phases.py: start_s, spec_s)."""

    def __init__(self, exp: Experiment, opts: RunOptions, *, device: DeviceInfo | None = None,
                 gpus: list[GpuChoice] | None = None, phases: dict | None = None):
        from ..shards import parse_shard, shard_plan

        self.exp, self.opts = exp, opts
        self.phases: dict = {}  # the receipt's measuring summary (build_s, measure_s, rows_measured, ...)
        self.phases_s = Phases(phases or {})  # every phase's wall seconds (runner/phases.py)
        if not opts.isolate and (opts.gpus or opts.cluster):
            raise UsageError("--in-process measures in this process, on GPU 0: it cannot go with --gpus or --cluster")
        self.shard = parse_shard(opts.shard) if opts.shard else None
        prestarted = _prestart(exp, opts, gpus)
        try:
            with self.phases_s.timed("plan_s"):
                self.plan: Plan = make_plan(exp)
                if self.shard:
                    self.plan = shard_plan(self.plan, self.shard)
            with self.phases_s.timed("gpu_probe_s"):
                self.pool = _pool(opts, gpus, prestarted) if opts.isolate else None
                self.device = device if device is not None else (self.pool.device() if self.pool else _probe())
        except BaseException:
            for w in prestarted.values():
                w.kill()
            raise
        if self.device is None and opts.cluster and opts.cluster != "local":
            self.pool.close()
            raise NoDeviceError(f"--cluster {opts.cluster}: no worker shows a GPU (NVML sees none where its "
                                f"CUDA_VISIBLE_DEVICES points): nothing to build for or measure on")
        self.rows: list[Result] = []

    def run(self) -> RunOutcome:
        with first_interrupt_only():  # a second Ctrl-C (GNU timeout sends two) must not break the unwinding
            return self._run()

    def _run(self) -> RunOutcome:
        # where the run will write, checked before minutes of building: a bad --store or --runs-dir is exit 2
        Store.check_writable(self.opts.store)
        writable_dir(self.opts.runs_dir, "--runs-dir")
        try:
            t0 = time.monotonic()
            self.builds = build_for(self.exp, self.device, self.opts)
            self.phases["build_s"] = time.monotonic() - t0
            self.phases_s.add("build_s", self.phases["build_s"])
            t0 = time.monotonic()
            for name, failure in self.builds.failures.items():
                log(f"BUILD_ERROR {name}:\n{failure.message}")
            if self.device is None:
                ok = sum(1 for b in self.builds.by_impl.values() if isinstance(b, LoadedExtension))
                raise NoDeviceError(
                    f"spec {self.exp.path} is valid and {ok} extension(s) built ({len(self.builds.failures)} failed) "
                    f"for sm_{self.builds.target_cc}, but no CUDA device is present: nothing can be measured on this "
                    f"machine. What can be known without one (resources, occupancy, waves, predicted times): try "
                    f"`gemmcompare analyze {self.exp.path} --device h200`.")
            self.store = Store(self.opts.store)
            self.receipt = self._receipt()
            self.run_id, run_dir, done = self._open_run(self.receipt)
            self.folder = RunFolder(run_dir)
            self._write_receipt()
            self.phases_s.add("run_setup_s", time.monotonic() - t0)
            status = self._measure(done)
            return RunOutcome(self.run_id, run_dir, self.rows, status)
        finally:
            if self.pool is not None:
                self.pool.close()

    def _gpu_names(self) -> str:
        names = self.pool.gpu_names() if self.pool else []
        return " + ".join(sorted(set(names))) if names else self.device.name

    def _receipt(self) -> dict:
        from ..receipt import environment
        from ..telemetry import Telemetry

        exp, device = self.exp, self.device
        receipt = environment(device, Telemetry(device.index).driver_version())
        receipt.update({
            "spec": exp.path, "spec_name": exp.name, "spec_hash": exp.spec_hash,
            # {} for the whole spec; else what --shapes, --only, --contract, --check-only, --l2, --energy, --oracle set
            "narrowed": dict(exp.narrowed),
            "contracts": {c.name: c.describe() for c in exp.contracts},
            "tolerance_rule": corr.tolerance_formula(),
            "tolerances": {d.value: vars(t) for d, t in corr.TOLERANCES.items()},
            "correctness": vars(exp.correctness),
            "timing": {"method": "cuda_events" + ("+graph" if exp.timing.graph else ""), **exp.timing.as_dict()},
            "compare_threshold": exp.report.threshold,
            "report_across": exp.report.across,
            "report_plots": list(exp.report.plots),  # `gemmcompare report` draws these later too
            "baseline": dict(exp.baselines) if exp.baselines else exp.baseline,  # per contract, or one
            "isolation": "one worker process per GPU, replaced after a crash or timeout; each group (problem x "
                         "contract) measured on one GPU with its baseline" if self.opts.isolate else "in-process",
            "placement": self.pool.describe() if self.pool else {"kind": "in-process"},
            "gpus": [],  # one receipt per GPU, added as each GPU's worker starts
        })
        if self.shard:
            receipt["shard"] = {**self.shard.as_dict(), "rows": self.plan.row_count}
        return receipt

    def _write_receipt(self) -> None:
        full = {"run_id": self.run_id, **self.receipt}
        self.folder.write_receipt(full)
        self.store.set_run_receipt(self.run_id, full)

    def _add_gpu(self, gpu: dict) -> None:
        """A GPU's worker is up: its receipt joins the run's (once per GPU)."""
        if gpu and all(g.get("uuid") != gpu.get("uuid") for g in self.receipt["gpus"]):
            self.receipt["gpus"].append(dict(gpu))
            self._write_receipt()

    def _open_run(self, receipt: dict) -> tuple[str, Path, set]:
        """A new run in the store, or the run --resume names (checked to be the same spec, GPU and shard)."""
        exp, opts = self.exp, self.opts
        gpu = self._gpu_names()
        if not opts.resume:
            run_id = new_run_id()
            run_dir = opts.runs_dir / run_id
            self.store.create_run({
                "run_id": run_id, "name": exp.name, "spec_path": exp.path, "spec_hash": exp.spec_hash,
                "status": "running", "started_at": now(), "gpu": gpu, "cc": receipt["compute_capability"],
                "git_commit": receipt["git_commit"], "git_dirty": receipt["git_dirty"],
                "gemmcompare_version": receipt["gemmcompare"], "run_dir": str(run_dir), "receipt": receipt,
                "spec_text": exp.text,
            })
            return run_id, run_dir, set()
        prev = self.store.find_run(opts.resume)
        if prev is None:
            raise GemmCompareError(f"--resume {opts.resume}: no such run in {opts.store}")
        if prev["spec_hash"] != exp.spec_hash:
            raise GemmCompareError(f"--resume {prev['run_id']}: that run used a different spec "
                                   f"(hash {prev['spec_hash'][:12]} vs {exp.spec_hash[:12]}); start a new run")
        if prev["gpu"] != gpu:
            raise GemmCompareError(f"--resume {prev['run_id']}: that run measured on {prev['gpu']}, this machine has "
                                   f"{gpu}; rows from two GPU models cannot share a run")
        prev_shard = (prev.get("receipt") or {}).get("shard")
        this_shard = receipt.get("shard")
        if (prev_shard or {}).get("index", None) != (this_shard or {}).get("index", None) or \
                (prev_shard or {}).get("count") != (this_shard or {}).get("count"):
            raise GemmCompareError(f"--resume {prev['run_id']}: that run was shard "
                                   f"{_shard_text(prev_shard)}, this one is {_shard_text(this_shard)}")
        if prev["git_commit"] != receipt["git_commit"]:
            log(f"note: run {prev['run_id']} was started at commit {prev['git_commit']}, resuming at "
                f"{receipt['git_commit']}; both are in the receipts")
            receipt["resumed_from_commit"] = prev["git_commit"]
        receipt["gpus"] = list((prev.get("receipt") or {}).get("gpus") or [])
        done = self.store.done_keys(prev["run_id"])
        self.store.set_run_status(prev["run_id"], "running")
        log(f"resuming run {prev['run_id']}: {len(done)} rows already done")
        return prev["run_id"], Path(prev["run_dir"]), done

    def _jobs(self, done: set) -> list[MeasureJob]:
        """The groups still to measure; costliest first when several GPUs share them (so none idles long
        at the end), in plan order on a single GPU as before."""
        from ..shards import by_cost

        groups = list(self.plan.groups(done))
        if self.opts.gpus or self.opts.cluster:
            groups = by_cost(self.plan, groups)
        return [MeasureJob(g.problem_index, g.contract.name, tuple(i.name for i in g.implementations))
                for g in groups]

    def _measure(self, done: set) -> str:
        """Every group still to do, through the pool of GPU workers (or in this process); the run's status."""
        from ..progress import bar

        setup = WorkerSetup(self.exp, self.run_id, self.device.index, {
            name: b if not isinstance(b, LoadedExtension) else BuiltExtensionRef(b.plan, b.path)
            for name, b in self.builds.by_impl.items()}, **({"backend": self.opts.backend} if self.opts.backend else {}))
        self.bar = bar(self.plan.row_count - len(done), "rows", "row", enabled=self.opts.progress)
        status = "complete"
        report = None
        if self.opts.report_after:
            from ..report import import_in_background

            import_in_background()
        try:
            if self.opts.isolate:
                report = self.pool.measure(setup, self._jobs(done), emit=self._emit, on_gpu=self._add_gpu,
                                           on_job=lambda label, job: self.bar.set_postfix_str(
                                               f"{label}: {self.exp.problems[job.problem_index].label} {job.contract}"))
            else:
                with self.phases_s.timed("measure_s"):
                    for group in self.plan.groups(done):
                        self.bar.set_postfix_str(f"{group.entry.label} {group.contract.name}")
                        self._in_process(group)
                if hasattr(self, "_executor"):
                    for phase, seconds in self._executor.take_phases().items():
                        self.phases_s.add(phase, seconds)
        except KeyboardInterrupt:
            status = "interrupted"
            log(f"interrupted: {len(self.rows)} rows kept; continue with --resume {self.run_id}")
        except (ContextLost, SessionLost) as exc:
            status = "failed"
            log(f"run stopped: {exc}")
        except BaseException:
            status = "failed"  # recorded as such, then reported by the caller
            raise
        finally:
            self.bar.close()
            if report is not None:
                self._record_phase(report)
            self.store.set_run_status(self.run_id, status, now())
        return status

    def _record_phase(self, report) -> None:
        """The measuring phase in the receipt (builds are timed apart): rows, seconds, rows per second,
        and what each GPU did; and the phases' seconds (phases_s)."""
        self.phases.update({"measure_s": report.measure_s, "rows_measured": report.rows,
                            "rows_per_s": report.rows / report.measure_s if report.measure_s else None,
                            "gpus_lost": report.lost})
        self.receipt["phases"] = self.phases
        for g in self.receipt["gpus"]:
            stats = report.gpus.get(g.get("uuid"))
            if stats is not None:
                g.update({"rows": stats.rows, "groups": stats.groups, "busy_s": stats.busy_s,
                          "worker_start_s": stats.start_s, "worker_waited_s": stats.waited_s,
                          "worker_startup_s": stats.startup, "phases_s": stats.phases})
        self.phases_s.add("worker_wait_s", getattr(report, "workers_up_s", None))
        self.phases_s.add("measure_s", report.measure_s)
        gpus = list(report.gpus.values())
        started = [s for s in gpus if getattr(s, "start_s", None) is not None]
        if started:  # the slowest GPU's worker: the one the parent waited for
            slowest = max(started, key=lambda s: s.start_s)
            self.phases_s.add("worker_start_s", slowest.start_s)
            for step, seconds in (getattr(slowest, "startup", None) or {}).items():
                if isinstance(seconds, (int, float)):  # (the timeline stays in the GPU's receipt)
                    self.phases_s.add(f"worker_{step}", seconds)
        for stats in gpus:
            for phase, seconds in (getattr(stats, "phases", None) or {}).items():
                self.phases_s.add(phase, seconds)
        self.receipt["phases_s"] = dict(self.phases_s)
        self._write_receipt()
        if report.rows:
            log(f"measured {report.rows} rows in {report.measure_s:.1f} s on {len(report.gpus)} GPU(s): "
                f"{report.rows / max(report.measure_s, 1e-9):.2f} rows/s (builds before: {self.phases['build_s']:.1f} s)")

    def finish_phases(self, **seconds) -> dict:
        """Phases spent after run() (the report), and the process's total so far, into the receipt;
        returns phases_s."""
        for name, value in seconds.items():
            self.phases_s.add(name, value)
        total = process_age_s()
        if total is not None:
            self.phases_s["total_s"] = total
        if hasattr(self, "receipt") and hasattr(self, "run_id"):
            self.receipt["phases_s"] = dict(self.phases_s)
            self._write_receipt()
        return dict(self.phases_s)

    def _emit(self, row: Result) -> None:
        t0 = time.monotonic()
        row.finished_at = now()
        self.store.add_result(row)
        self.folder.add(row)
        self.rows.append(row)
        self.bar.update(1)
        if self.opts.lines:
            took = f" {row.median_ms:.4f} ms" if row.median_ms else ""
            log(f"  [{len(self.rows)}/{self.bar.total}] {row.problem} {row.contract} {row.implementation}: "
                f"{row.status.value}{took}")
        self.phases_s.add("store_s", time.monotonic() - t0)

    # -- in this process (--in-process: debugging, sanitizers) ---------------------------------------
    def _in_process(self, group: Group) -> None:
        import torch

        from ..telemetry import Telemetry
        from .executor import ProblemExecutor

        if not hasattr(self, "_executor"):
            from .gpus import gpu_receipt

            gpu = gpu_receipt(self.device.index)
            self._add_gpu(gpu)

            def emit(row: Result) -> None:
                row.gpu_index, row.gpu_uuid = gpu.get("index"), gpu.get("uuid")
                self._emit(row)

            self._stream = torch.cuda.Stream()
            self._executor = ProblemExecutor(self.exp, self.run_id, self.device, self.builds.by_impl,
                                             Telemetry(self.device.index, uuid=gpu.get("uuid")), emit=emit)
        with torch.cuda.stream(self._stream):
            self._executor.run(group.entry, group.contract, list(group.implementations))


def _probe():
    from ..device import probe_device

    return probe_device()


def _shard_text(shard: dict | None) -> str:
    return f"{shard['index']}/{shard['count']}" if shard else "the whole plan"
