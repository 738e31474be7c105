"""The parent process of a run: plan -> build -> store and run folder -> one measuring worker, fed one
group (problem x contract) at a time -> rows written to the store as they arrive.

The worker (worker.py) owns the CUDA context and is replaced after a crash or a hang; the executor
(executor.py) measures one group inside it. With `isolate=False` (--in-process) the executor runs here.
"""

from __future__ import annotations

import datetime as dt
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..build.experiment import ExperimentBuilds, build_experiment
from ..build.extension import LoadedExtension
from ..contracts import correctness as corr
from ..device import probe_device
from ..errors import GemmCompareError, NoDeviceError
from ..files import writable_dir
from ..plan import Group, Plan, make_plan
from ..results import Result, Status
from ..spec import Experiment
from ..store import DEFAULT_STORE, RunFolder, Store
from .executor import ContextLost, base_row, now
from .messages import (BuiltExtensionRef, ContextLostReport, JobDone, MeasureJob, RowDone, StageChanged,
                       WorkerFailed, WorkerReady, WorkerSetup)
from .worker import WorkerHandle

WORKER_START_TIMEOUT_S = 600  # importing torch and loading every extension, on a cold machine


@dataclass
class RunOptions:
    store: Path = Path(DEFAULT_STORE)
    runs_dir: Path = Path("runs")
    cache_dir: Path | None = None
    arch: str | None = None  # compile target when there is no device (e.g. sm_90a)
    resume: str | None = None
    jobs: int | None = None
    progress: bool = True
    isolate: bool = True  # measure in a worker process (replaced after a crash or hang)


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    rows: list[Result]
    status: str  # complete, interrupted or failed


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_for(exp: Experiment, device, opts: RunOptions) -> ExperimentBuilds:
    return build_experiment(exp, device, arch=opts.arch, cache_dir=opts.cache_dir, jobs=opts.jobs,
                            progress=opts.progress)


class Runner:
    """The parent side of a run: builds, the store and the run folder, and the measuring worker."""

    def __init__(self, exp: Experiment, opts: RunOptions):
        self.exp, self.opts = exp, opts
        self.plan: Plan = make_plan(exp)
        self.device = probe_device()
        self.rows: list[Result] = []
        self.worker: WorkerHandle | None = None

    def run(self) -> RunOutcome:
        # where the run will write, checked before minutes of building: a bad --store or --runs-dir is exit 2
        Store.check_writable(self.opts.store)
        writable_dir(self.opts.runs_dir, "--runs-dir")
        self.builds = build_for(self.exp, self.device, self.opts)
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
        receipt = self._receipt()
        self.run_id, run_dir, done = self._open_run(receipt)
        self.folder = RunFolder(run_dir)
        self.folder.write_receipt({"run_id": self.run_id, **receipt})
        status = self._measure(done)
        return RunOutcome(self.run_id, run_dir, self.rows, status)

    def _receipt(self) -> dict:
        from ..receipt import environment
        from ..telemetry import Telemetry

        exp, device = self.exp, self.device
        receipt = environment(device, Telemetry(device.index).driver_version())
        receipt.update({
            "spec": exp.path, "spec_name": exp.name, "spec_hash": exp.spec_hash,
            "contracts": {c.name: c.describe() for c in exp.contracts},
            "tolerance_rule": corr.tolerance_formula(),
            "tolerances": {d.value: vars(t) for d, t in corr.TOLERANCES.items()},
            "correctness": vars(exp.correctness),
            "timing": {"method": "cuda_events" + ("+graph" if exp.timing.graph else ""), **exp.timing.as_dict()},
            "compare_threshold": exp.report.threshold,
            "baseline": exp.baseline,
            "isolation": "one worker process per GPU, replaced after a crash or timeout" if self.opts.isolate
            else "in-process",
        })
        return receipt

    def _open_run(self, receipt: dict) -> tuple[str, Path, set]:
        """A new run in the store, or the run --resume names (checked to be the same spec and GPU)."""
        exp, opts = self.exp, self.opts
        if not opts.resume:
            run_id = dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
            run_dir = opts.runs_dir / run_id
            self.store.create_run({
                "run_id": run_id, "name": exp.name, "spec_path": exp.path, "spec_hash": exp.spec_hash,
                "status": "running", "started_at": now(), "gpu": self.device.name, "cc": receipt["compute_capability"],
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
        if prev["gpu"] != self.device.name:
            raise GemmCompareError(f"--resume {prev['run_id']}: that run measured on {prev['gpu']}, this machine has "
                                   f"{self.device.name}; rows from two GPUs cannot share a run")
        if prev["git_commit"] != receipt["git_commit"]:
            log(f"note: run {prev['run_id']} was started at commit {prev['git_commit']}, resuming at "
                f"{receipt['git_commit']}; both are in the receipts")
            receipt["resumed_from_commit"] = prev["git_commit"]
        done = self.store.done_keys(prev["run_id"])
        self.store.set_run_status(prev["run_id"], "running")
        log(f"resuming run {prev['run_id']}: {len(done)} rows already done")
        return prev["run_id"], Path(prev["run_dir"]), done

    def _measure(self, done: set) -> str:
        """Every group still to do, through the worker (or in this process); the run's final status."""
        from tqdm import tqdm

        self.setup = WorkerSetup(self.exp, self.run_id, self.device.index, {
            name: b if not isinstance(b, LoadedExtension) else BuiltExtensionRef(b.plan, b.path)
            for name, b in self.builds.by_impl.items()})
        self.bar = tqdm(total=self.plan.row_count - len(done), desc="rows", unit="row",
                        disable=not self.opts.progress, file=sys.stderr, dynamic_ncols=True)
        status = "complete"
        try:
            for group in self.plan.groups(done):
                self.bar.set_postfix_str(f"{group.entry.label} {group.contract.name}")
                if self.opts.isolate:
                    self._dispatch(group)
                else:
                    self._in_process(group)
        except KeyboardInterrupt:
            status = "interrupted"
            log(f"interrupted: {len(self.rows)} rows kept; continue with --resume {self.run_id}")
        except ContextLost as exc:
            status = "failed"
            log(f"run stopped: {exc}")
        except BaseException:
            status = "failed"  # recorded as such, then reported by the caller
            raise
        finally:
            if self.worker is not None:
                if status == "complete":
                    self.worker.stop()
                else:  # interrupted or failed: do not wait for a measurement in progress
                    self.worker.kill()
                self.worker = None
            self.bar.close()
            self.store.set_run_status(self.run_id, status, now())
        return status

    def _emit(self, row: Result) -> None:
        row.finished_at = now()
        self.store.add_result(row)
        self.folder.add(row)
        self.rows.append(row)
        self.bar.update(1)

    # -- in a worker process (the default) ---------------------------------------------------------
    def _start_worker(self) -> WorkerHandle:
        w = WorkerHandle(self.setup)
        if not w.conn.poll(WORKER_START_TIMEOUT_S):
            w.kill()
            raise GemmCompareError(f"the measuring worker did not start within {WORKER_START_TIMEOUT_S} s")
        try:
            msg = w.conn.recv()
        except EOFError:
            w.kill()
            raise GemmCompareError(f"the measuring worker died while starting (exit code {w.proc.exitcode})") from None
        if not isinstance(msg, WorkerReady):
            w.kill()
            raise GemmCompareError(f"the measuring worker failed to start:\n{getattr(msg, 'traceback', msg)}")
        return w

    def _dispatch(self, group: Group) -> None:
        pending = {impl.name: impl for impl in group.implementations}
        silence = self.exp.timing.row_timeout_s + 120  # the worker's own timeout fires first; this is the backstop
        while pending:
            if self.worker is None:
                self.worker = self._start_worker()
            self.worker.conn.send(MeasureJob(group.problem_index, group.contract.name, tuple(pending)))
            self._follow(group, pending, silence)

    def _follow(self, group: Group, pending: dict, silence: float) -> None:
        """Read the worker's messages for one job until it is done or the worker is lost."""
        w, current, what = self.worker, None, "starting"
        while True:
            if not w.conn.poll(silence):
                self._lost(group, pending, current, "TIMEOUT",
                           f"no word from the worker for {silence:g} s while {what}; the process was killed")
                return
            try:
                msg = w.conn.recv()
            except (EOFError, OSError):
                w.proc.join(timeout=10)
                self._lost(group, pending, current, "CRASH",
                           f"the worker process died (exit code {w.proc.exitcode}) while {what}")
                return
            if isinstance(msg, RowDone):
                pending.pop(msg.row.implementation, None)
                self._emit(msg.row)
            elif isinstance(msg, StageChanged):
                current, what = msg.implementation, f"{msg.implementation}: {msg.what}"
            elif isinstance(msg, JobDone):
                for name, impl in list(pending.items()):  # an implementation that produced no row: say so
                    row = self._row(group, impl)
                    row.status, row.reason = Status.CRASH, "the worker returned no row for it"
                    self._emit(row)
                pending.clear()
                return
            elif isinstance(msg, ContextLostReport):
                self._lost(group, pending, msg.implementation, msg.status, msg.text)
                return
            elif isinstance(msg, WorkerFailed):
                self._lost(group, pending, current, "CRASH", f"worker error while {what}:\n{msg.traceback}")
                return

    def _row(self, group: Group, impl) -> Result:
        return base_row(self.run_id, self.exp, group.entry, group.contract, impl.name, impl.family, impl.params)

    def _lost(self, group: Group, pending: dict, name: str | None, status: str, text: str) -> None:
        """The worker is gone: record the implementation it was running, start afresh for the rest."""
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        if name is None or name not in pending:
            raise ContextLost(f"the measuring worker failed before any implementation started: {text}")
        row = self._row(group, pending.pop(name))
        row.status, row.reason = Status(status), text
        row.add_note("the worker process was replaced; the run went on with the next implementation")
        self._emit(row)
        log(f"{status} {name} on {group.entry.label} {group.contract.name}: {text.splitlines()[0] if text else ''}")

    # -- in this process (--in-process: debugging, sanitizers) ---------------------------------------
    def _in_process(self, group: Group) -> None:
        import torch

        from ..telemetry import Telemetry
        from .executor import ProblemExecutor

        if not hasattr(self, "_executor"):
            self._stream = torch.cuda.Stream()
            self._executor = ProblemExecutor(self.exp, self.run_id, self.device, self.builds.by_impl,
                                             Telemetry(self.device.index), emit=self._emit)
        with torch.cuda.stream(self._stream):
            self._executor.run(group.entry, group.contract, list(group.implementations))
