"""One GPU's measuring worker seen from outside: start it, hand it a group, follow what it says.

`GpuSession.measure(job, emit)` returns when every implementation of the job has its row. A worker
that crashes or goes silent is killed; the implementation it was running gets a CRASH or TIMEOUT row;
a fresh worker on the same GPU carries on with the rest of the job. Used by the parent for each local
GPU (pool.py) and by a cluster engine's worker for its GPU (engine_dask.py): the same code decides
what a lost worker means wherever it runs.

A worker that cannot start, or dies before any implementation started, is not blamed on a kernel:
`SessionLost` carries the part of the job still to do, for the caller to give to another GPU.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from ..errors import GemmCompareError
from ..results import Result, Status
from .messages import (ContextLostReport, JobDone, MeasureJob, RowDone, StageChanged, WorkerFailed, WorkerReady,
                       WorkerSetup)
from .worker import WorkerHandle

WORKER_START_TIMEOUT_S = 600  # importing torch and loading every extension, on a cold machine
SILENCE_MARGIN_S = 120  # past the row timeout: the worker's own timeout fires first; this is the backstop


class SessionLost(GemmCompareError):
    """This GPU's worker cannot measure (it would not start, or died before any kernel ran)."""

    def __init__(self, message: str, remaining: MeasureJob | None):
        super().__init__(message)
        self.remaining = remaining


def job_row(setup: WorkerSetup, job: MeasureJob, impl) -> Result:
    """A fresh row for one implementation of a measuring job (its group's problem and contract)."""
    from .rows import base_row

    exp = setup.experiment
    contract = next(c for c in exp.contracts if c.name == job.contract)
    return base_row(setup.run_id, exp, exp.problems[job.problem_index], contract, impl.name, impl.family, impl.params)


class GpuSession:
    def __init__(self, setup: WorkerSetup, visible: str | None = None, label: str = "",
                 silence_margin_s: float = SILENCE_MARGIN_S, start_timeout_s: float = WORKER_START_TIMEOUT_S,
                 log: Callable[[str], None] = lambda msg: None, prestarted: WorkerHandle | None = None):
        self.setup, self.visible, self.label = setup, visible, label or (f"GPU {visible}" if visible else "GPU")
        self.silence = setup.experiment.timing.row_timeout_s + silence_margin_s
        self.start_timeout_s, self.log = start_timeout_s, log
        self.worker: WorkerHandle | None = None
        self.gpu: dict = {}  # the receipt of the GPU, from the first worker that started
        self.started_s: float | None = None  # how long the first worker took to be ready, from its spawn
        self.waited_s: float | None = None  # of which the caller waited for it (less, for a prestarted one)
        self.startup: dict = {}  # the first worker's start-up steps (phases.WORKER names them)
        self.phases: dict = {}  # seconds of each group phase, summed over the jobs (phases.GROUPS)
        self.stopped = threading.Event()  # set by abort(): no more rows, no fresh workers
        self._starting: WorkerHandle | None = None
        self._prestarted = prestarted  # a worker started before the setup existed (worker.py), used first

    # -- the worker process --------------------------------------------------------------------------
    def _start(self) -> WorkerHandle:
        t0 = time.monotonic()
        w, self._prestarted = self._prestarted, None
        if w is None:
            w = WorkerHandle(self.setup, self.visible)
        self._starting = w
        if self.stopped.is_set():
            w.kill()
            raise GemmCompareError(f"{self.label}: stopped")
        t_sent = w.spawned_at  # sent with the spawn, unless it is sent now
        if not w.begun:
            t_sent = time.monotonic()
            try:
                w.begin(self.setup)
            except OSError:
                w.kill()
                raise GemmCompareError(f"{self.label}: the measuring worker died while starting "
                                       f"(exit code {w.proc.exitcode})") from None
        if not w.conn.poll(self.start_timeout_s):
            w.kill()
            raise GemmCompareError(f"{self.label}: the measuring worker did not start within {self.start_timeout_s:g} s")
        try:
            msg = w.conn.recv()
        except (EOFError, OSError):
            w.kill()
            raise GemmCompareError(f"{self.label}: the measuring worker died while starting "
                                   f"(exit code {w.proc.exitcode})") from None
        if not isinstance(msg, WorkerReady):
            w.kill()
            raise GemmCompareError(f"{self.label}: the measuring worker failed to start:\n"
                                   f"{getattr(msg, 'traceback', msg)}")
        if not self.gpu:
            self.gpu = dict(msg.gpu)
            self.started_s, self.waited_s = time.monotonic() - w.spawned_at, time.monotonic() - t0
            self.startup = dict(getattr(msg, "startup", None) or {})
            if isinstance(self.startup.get("timeline_s"), dict):  # the parent's side of the worker's timeline
                self.startup["timeline_s"].update(setup_sent=t_sent - w.spawned_at, ready_received=self.started_s)
        return w

    def start(self) -> None:
        """Start the worker now (else the first job starts it); SessionLost if it cannot start."""
        if self.worker is None and not self.stopped.is_set():
            try:
                self.worker = self._start()
            except GemmCompareError as exc:
                raise SessionLost(str(exc), None) from None

    def stop(self) -> None:
        """After the last job: let the worker leave cleanly."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def abort(self) -> None:
        """From another thread (Ctrl-C): kill the worker at once; measure() then returns without rows.
        The pipe stays open until close(): the thread in measure() may be reading it."""
        self.stopped.set()
        for w in (self.worker, self._starting, self._prestarted):
            if w is not None and w.proc.is_alive():
                w.proc.kill()

    def close(self) -> None:
        for w in (self.worker, self._prestarted):
            if w is not None:
                w.kill()
        self.worker = self._prestarted = None

    # -- one job -------------------------------------------------------------------------------------
    def measure(self, job: MeasureJob, emit: Callable[[Result], None]) -> None:
        """Every implementation of `job` gets a row through `emit` (stamped with this GPU), unless the
        session is aborted; SessionLost if the worker cannot measure at all."""
        impls = {i.name: i for i in self.setup.experiment.implementations}
        pending = {name: impls[name] for name in job.implementations}
        while pending and not self.stopped.is_set():
            if self.worker is None:
                try:
                    self.worker = self._start()
                except GemmCompareError as exc:
                    raise SessionLost(str(exc), _rest(job, pending)) from None
            self.worker.conn.send(MeasureJob(job.problem_index, job.contract, tuple(pending)))
            self._follow(job, pending, emit)

    def _follow(self, job: MeasureJob, pending: dict, emit) -> None:
        """Read the worker's messages for one job until it is done or the worker is lost."""
        w, current, what = self.worker, None, "starting"
        while not self.stopped.is_set():
            if not w.conn.poll(self.silence):
                self._lost(job, pending, current, "TIMEOUT",
                           f"no word from the worker for {self.silence:g} s while {what}; the process was killed", emit)
                return
            try:
                msg = w.conn.recv()
            except (EOFError, OSError):
                w.proc.join(timeout=10)
                self._lost(job, pending, current, "CRASH",
                           f"the worker process died (exit code {w.proc.exitcode}) while {what}", emit)
                return
            if isinstance(msg, RowDone):
                pending.pop(msg.row.implementation, None)
                self._emit(msg.row, emit)
            elif isinstance(msg, StageChanged):
                current, what = msg.implementation, f"{msg.implementation}: {msg.what}"
            elif isinstance(msg, JobDone):
                for phase, seconds in (getattr(msg, "phases", None) or {}).items():
                    self.phases[phase] = self.phases.get(phase, 0.0) + seconds
                for name, impl in list(pending.items()):  # an implementation that produced no row: say so
                    row = job_row(self.setup, job, impl)
                    row.status, row.reason = Status.CRASH, "the worker returned no row for it"
                    self._emit(row, emit)
                pending.clear()
                return
            elif isinstance(msg, ContextLostReport):
                self._lost(job, pending, msg.implementation, msg.status, msg.text, emit)
                return
            elif isinstance(msg, WorkerFailed):
                self._lost(job, pending, current, "CRASH", f"worker error while {what}:\n{msg.traceback}", emit)
                return

    def _emit(self, row: Result, emit) -> None:
        if self.stopped.is_set():
            return  # aborted: a row from a killed worker is not a result
        row.gpu_index = self.gpu.get("index")
        row.gpu_uuid = self.gpu.get("uuid")
        emit(row)

    def _lost(self, job: MeasureJob, pending: dict, name: str | None, status: str, text: str, emit) -> None:
        """The worker is gone: record the implementation it was running; the next loop starts afresh."""
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        if self.stopped.is_set():
            return
        if name is None or name not in pending:
            raise SessionLost(f"{self.label}: the measuring worker failed before any implementation started: {text}",
                              _rest(job, pending))
        row = job_row(self.setup, job, pending.pop(name))
        row.status, row.reason = Status(status), text
        row.add_note("the worker process was replaced; the run went on with the next implementation")
        self._emit(row, emit)
        self.log(f"{status} {name} on {row.problem} {row.contract} ({self.label}): "
                 f"{text.splitlines()[0] if text else ''}")


def _rest(job: MeasureJob, pending: dict) -> MeasureJob | None:
    names = tuple(n for n in job.implementations if n in pending)
    return MeasureJob(job.problem_index, job.contract, names) if names else None
