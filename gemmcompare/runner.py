"""The runner: spec -> plan -> build -> per problem (inputs once, references once) -> each implementation
checked, then all timed interleaved -> result rows, written to the store as they are produced.
"""

from __future__ import annotations

import datetime as dt
import pickle
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .build.extension import BuildFailure, LoadedExtension, build_extensions, plan_extensions
from .contracts import correctness as corr
from .contracts.precision import PrecisionContract
from .device import DeviceInfo, parse_arch, probe_device
from .errors import GemmCompareError, NoDeviceError
from .executor import ContextLost, base_row, now
from .implementations.base import Implementation
from .results import Result, Status
from .spec import Experiment, ProblemEntry
from .store import RunFolder, Store
from .worker import WorkerHandle


@dataclass
class RunOptions:
    store: Path = Path("gemmcompare.db")
    runs_dir: Path = Path("runs")
    cache_dir: Path | None = None
    arch: str | None = None  # compile target when there is no device (e.g. sm_90a)
    resume: str | None = None
    jobs: int | None = None
    progress: bool = True
    isolate: bool = True  # measure in a worker process (replaced after a crash or hang)


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
    module_of = {p.merge_key: p.module_name for p in plans}
    built = build_extensions(plans, cache_dir=opts.cache_dir, jobs=opts.jobs, progress=opts.progress)
    for impl, req in wanted:
        outcome.by_impl[impl.name] = built[module_of[req.merge_key]]
    return outcome


# ---------------------------------------------------------------------------------------------------
# Running


class Runner:
    """The parent side of a run: builds, the store and the run folder, and the measuring worker."""

    def __init__(self, exp: Experiment, opts: RunOptions):
        self.exp, self.opts = exp, opts
        self.device = probe_device()
        self.store: Store | None = None
        self.folder: RunFolder | None = None
        self.rows: list[Result] = []
        self.worker: WorkerHandle | None = None

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
        from .receipt import environment
        from .telemetry import Telemetry

        receipt = environment(self.device, Telemetry(self.device.index).driver_version())
        receipt.update({
            "spec": exp.path, "spec_name": exp.name, "spec_hash": exp.spec_hash,
            "contracts": {c.name: c.describe() for c in exp.contracts},
            "tolerance_rule": corr.tolerance_formula(),
            "tolerances": {d.value: vars(t) for d, t in corr.TOLERANCES.items()},
            "correctness": vars(exp.correctness),
            "timing": {"method": "cuda_events" + ("+graph" if exp.timing.graph else ""), **exp.timing.as_dict()},
            "compare_threshold": exp.report.threshold,
            "baseline": exp.baseline,
            "isolation": "one worker process per GPU, replaced after a crash or timeout" if opts.isolate else "in-process",
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
            if prev["gpu"] != self.device.name:
                raise GemmCompareError(f"--resume {prev['run_id']}: that run measured on {prev['gpu']}, this machine has "
                                       f"{self.device.name}; rows from two GPUs cannot share a run")
            if prev["git_commit"] != receipt["git_commit"]:
                log(f"note: run {prev['run_id']} was started at commit {prev['git_commit']}, resuming at "
                    f"{receipt['git_commit']}; both are in the receipts")
                receipt["resumed_from_commit"] = prev["git_commit"]
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
        self._payload = pickle.dumps({
            "exp": exp, "run_id": run_id, "device_index": self.device.index,
            "builds": {name: (("fail", None, b) if isinstance(b, BuildFailure) else ("ok", b.plan, b.path))
                       for name, b in builds.by_impl.items()},
        })
        status = "complete"
        total = len(exp.problems) * len(exp.contracts) * len(exp.implementations) - len(done)
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="rows", unit="row", disable=not opts.progress, file=sys.stderr, dynamic_ncols=True)
        try:
            for index, entry in enumerate(exp.problems):
                for contract in exp.contracts:
                    todo = [i for i in exp.implementations if (entry.label, contract.name, i.name) not in done]
                    if todo:
                        self.bar.set_postfix_str(f"{entry.label} {contract.name}")
                        if opts.isolate:
                            self._dispatch(index, entry, contract, todo)
                        else:
                            self._in_process(entry, contract, todo)
        except KeyboardInterrupt:
            status = "interrupted"
            log(f"interrupted: {len(self.rows)} rows kept; continue with --resume {run_id}")
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
            self.store.set_run_status(run_id, status, now())
        return RunOutcome(run_id, run_dir, self.rows, status)

    def _emit(self, row: Result) -> None:
        row.finished_at = now()
        self.store.add_result(row)
        self.folder.add(row)
        self.rows.append(row)
        self.bar.update(1)

    # -- in a worker process (the default) ---------------------------------------------------------
    def _start_worker(self) -> WorkerHandle:
        w = WorkerHandle(self._payload)
        if not w.conn.poll(600):
            w.kill()
            raise GemmCompareError("the measuring worker did not start within 10 minutes")
        try:
            msg = w.conn.recv()
        except EOFError:
            w.kill()
            raise GemmCompareError(f"the measuring worker died while starting (exit code {w.proc.exitcode})") from None
        if msg[0] != "ready":
            w.kill()
            raise GemmCompareError(f"the measuring worker failed to start:\n{msg[-1]}")
        return w

    def _dispatch(self, index: int, entry: ProblemEntry, contract: PrecisionContract, todo: list[Implementation]) -> None:
        pending = {impl.name: impl for impl in todo}
        silence = self.exp.timing.row_timeout_s + 120  # the worker's own timeout fires first; this is the backstop
        while pending:
            if self.worker is None:
                self.worker = self._start_worker()
            w = self.worker
            w.conn.send(("problem", index, contract.name, list(pending)))
            current, what = None, "starting"
            while True:
                if not w.conn.poll(silence):
                    self._lost(entry, contract, pending, current, "TIMEOUT",
                               f"no word from the worker for {silence:g} s while {what}; the process was killed")
                    break
                try:
                    msg = w.conn.recv()
                except (EOFError, OSError):
                    w.proc.join(timeout=10)
                    self._lost(entry, contract, pending, current, "CRASH",
                               f"the worker process died (exit code {w.proc.exitcode}) while {what}")
                    break
                kind = msg[0]
                if kind == "row":
                    pending.pop(msg[1].implementation, None)
                    self._emit(msg[1])
                elif kind == "stage":
                    current, what = msg[1], f"{msg[1]}: {msg[2]}"
                elif kind == "done":
                    for name in list(pending):  # an implementation that produced no row: say so
                        row = base_row(self.run_id, self.exp, entry, contract, name, pending[name].family, pending[name].params)
                        row.status, row.reason = Status.CRASH, "the worker returned no row for it"
                        self._emit(row)
                    pending.clear()
                    break
                elif kind == "lost":
                    _, name, status, text = msg
                    self._lost(entry, contract, pending, name, status, text)
                    break
                elif kind == "error":
                    self._lost(entry, contract, pending, current, "CRASH", f"worker error while {what}:\n{msg[1]}")
                    break

    def _lost(self, entry, contract, pending, name, status, text) -> None:
        """The worker is gone: record the implementation it was running, start afresh for the rest."""
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        if name is None or name not in pending:
            raise ContextLost(f"the measuring worker failed before any implementation started: {text}")
        impl = pending.pop(name)
        row = base_row(self.run_id, self.exp, entry, contract, name, impl.family, impl.params)
        row.status, row.reason = Status(status), text
        row.notes = "the worker process was replaced; the run went on with the next implementation"
        self._emit(row)
        log(f"{status} {name} on {entry.label} {contract.name}: {text.splitlines()[0] if text else ''}")

    # -- in this process (--in-process: debugging, or implementations that only live here) ----------
    def _in_process(self, entry: ProblemEntry, contract: PrecisionContract, todo: list[Implementation]) -> None:
        import torch

        from .executor import ProblemExecutor
        from .telemetry import Telemetry

        if not hasattr(self, "_executor"):
            self._stream = torch.cuda.Stream()
            self._executor = ProblemExecutor(self.exp, self.run_id, self.device, self.builds.by_impl,
                                             Telemetry(self.device.index), emit=self._emit)
        with torch.cuda.stream(self._stream):
            self._executor.run(entry, contract, todo)
