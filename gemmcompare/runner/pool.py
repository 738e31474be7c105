"""The GPUs of this host measuring together: one GpuSession (one isolated worker process) per GPU.

Whole groups go out from one queue, costliest first (shards.by_cost); a thread per GPU takes the next
group when its GPU is free and waits on its worker's pipe. Rows come back to the caller's thread, the
only one that writes the store. A group is measured on one GPU with its baseline, so every % of
baseline compares rows of one GPU. A worker that crashes or hangs is replaced by its session; a GPU
whose worker cannot start at all is given up and the rest of its group goes back to the queue for the
others. Nothing here compiles: the builds are done before the pool starts.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..results import Result
from .gpu_session import GpuSession, SessionLost
from .gpus import GpuChoice
from .messages import MeasureJob, WorkerSetup


@dataclass
class GpuStats:
    """What one GPU did in the measuring phase (kept in its receipt)."""

    rows: int = 0
    groups: int = 0
    busy_s: float = 0.0  # time inside jobs
    start_s: float | None = None  # its first worker's start (torch, CUDA context, loading the builds)
    waited_s: float | None = None  # of which the pool waited (less when it was started early: worker.py)
    startup: dict = field(default_factory=dict)  # the worker's own start-up steps (phases.WORKER names them)
    phases: dict = field(default_factory=dict)  # its groups' phases, summed (phases.GROUPS)


@dataclass
class PoolReport:
    """The measuring phase: from the first group handed out to the last row received."""

    measure_s: float = 0.0
    workers_up_s: float = 0.0  # from measure() being called to every GPU's worker up (or given up)
    rows: int = 0
    gpus: dict[str, GpuStats] = field(default_factory=dict)  # by GPU UUID (or label)
    lost: list[str] = field(default_factory=list)  # GPUs given up, with the reason


class _Queue:
    """The groups still to measure. A thread leaves only when nothing is queued and nothing is in
    flight anywhere: a group in flight may come back (its GPU given up)."""

    def __init__(self, jobs: list[MeasureJob]):
        self.jobs = collections.deque(jobs)
        self.in_flight = 0
        self.closed = False
        self.cond = threading.Condition()

    def take(self) -> MeasureJob | None:
        with self.cond:
            while True:
                if self.closed:
                    return None
                if self.jobs:
                    self.in_flight += 1
                    return self.jobs.popleft()
                if self.in_flight == 0:
                    return None
                self.cond.wait()

    def done(self, remaining: MeasureJob | None = None) -> None:
        with self.cond:
            self.in_flight -= 1
            if remaining is not None:
                self.jobs.appendleft(remaining)
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


class LocalPool:
    """`prestarted`: workers already started (worker.WorkerHandle.prestart) by CUDA_VISIBLE_DEVICES value;
    each GPU's session takes its own, and close() ends those no GPU took."""

    def __init__(self, gpus: list[GpuChoice], silence_margin_s: float, log: Callable[[str], None] = lambda msg: None,
                 prestarted: dict | None = None):
        self.gpus, self.silence_margin_s, self.log = gpus, silence_margin_s, log
        self.sessions: list[GpuSession] = []
        self.prestarted = dict(prestarted or {})
        for visible in [v for v in self.prestarted if v not in {g.visible for g in gpus}]:
            self.prestarted.pop(visible).kill()

    def device(self):
        from ..device import probe_device

        return probe_device(self.gpus[0].index) if self.gpus else None

    def gpu_names(self) -> list[str]:
        return [g.name for g in self.gpus]

    def describe(self) -> dict:
        return {"kind": "local", "gpus": [g.label for g in self.gpus]}

    def close(self) -> None:
        for s in self.sessions:
            s.close()
        for w in self.prestarted.values():
            w.kill()
        self.prestarted.clear()

    def measure(self, setup: WorkerSetup, jobs: list[MeasureJob], emit: Callable[[Result], None],
                on_gpu: Callable[[dict], None] = lambda gpu: None,
                on_job: Callable[[str, MeasureJob], None] = lambda label, job: None) -> PoolReport:
        """Measure every job; `emit`, `on_gpu` (a GPU's receipt, once its worker is up) and `on_job` are
        called in this thread. Raises SessionLost when every GPU was given up with groups left."""
        self.sessions = [GpuSession(setup, g.visible, g.label, silence_margin_s=self.silence_margin_s, log=self.log,
                                    prestarted=self.prestarted.pop(g.visible, None)) for g in self.gpus]
        called = time.monotonic()
        work = _Queue(jobs)
        events: queue.Queue = queue.Queue()
        stats = {id(s): GpuStats() for s in self.sessions}
        # every GPU's worker starts first (together); groups go out once all are up or given up, so the
        # measuring phase measures and start-up stays apart (each GPU's worker_start_s)
        all_up = threading.Event()
        threads = [threading.Thread(target=self._serve, args=(s, work, events, stats[id(s)], all_up), daemon=True,
                                    name=f"gemmcompare {s.label}") for s in self.sessions]
        report = PoolReport()
        first_job: float | None = None
        last_row = time.monotonic()
        lost: list[SessionLost] = []
        waiting = len(self.sessions)
        try:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads) or not events.empty():
                try:
                    kind, session, payload = events.get(timeout=0.2)
                except queue.Empty:
                    continue
                if kind == "row":
                    emit(payload)
                    report.rows += 1
                    last_row = time.monotonic()
                elif kind == "gpu":
                    on_gpu(session.gpu)
                    waiting -= 1
                elif kind == "job":
                    first_job = first_job or time.monotonic()
                    on_job(session.label, payload)
                elif kind == "error":
                    raise payload
                elif kind == "lost":
                    if session.started_s is None:  # it never came up
                        waiting -= 1
                    lost.append(payload)
                    report.lost.append(str(payload))
                    self.log(f"{session.label} given up: {payload}")
                if waiting <= 0 and not all_up.is_set():
                    report.workers_up_s = time.monotonic() - called
                    all_up.set()
        except BaseException:
            work.close()
            all_up.set()
            for s in self.sessions:
                s.abort()
            raise
        finally:
            for t in threads:
                t.join(timeout=60)
            for s in self.sessions:
                s.close()
        report.measure_s = (last_row - first_job) if first_job is not None else 0.0
        for s in self.sessions:
            stats[id(s)].waited_s, stats[id(s)].startup, stats[id(s)].phases = s.waited_s, s.startup, s.phases
        report.gpus = {s.gpu.get("uuid") or s.label: stats[id(s)] for s in self.sessions}
        if work.jobs and lost:
            raise SessionLost(f"no GPU left to measure on; last error: {lost[-1]}", None)
        return report

    @staticmethod
    def _serve(session: GpuSession, work: _Queue, events: queue.Queue, stats: GpuStats,
               all_up: threading.Event) -> None:
        """One GPU's thread: start its worker, wait for the others, then take groups until none is left."""
        def row(r: Result) -> None:
            stats.rows += 1
            events.put(("row", session, r))

        try:
            session.start()
        except SessionLost as exc:
            events.put(("lost", session, exc))
            return
        stats.start_s = session.started_s
        events.put(("gpu", session, None))
        all_up.wait()
        while True:
            job = work.take()
            if job is None:
                break
            events.put(("job", session, job))
            t0 = time.monotonic()
            try:
                session.measure(job, row)
            except SessionLost as exc:
                work.done(exc.remaining)
                if not session.stopped.is_set():
                    events.put(("lost", session, exc))
                return
            except BaseException as exc:  # noqa: BLE001 - a bug here must stop the run, not leave it waiting
                work.done()
                events.put(("error", session, exc))
                return
            finally:
                stats.busy_s += time.monotonic() - t0
            stats.groups += 1
            work.done()
        session.stop()
