"""The measuring worker: a child process that owns the CUDA context, replaced after a fault.

An illegal memory access or a trap poisons a CUDA context for good, and a hung kernel never returns; so
kernels run in a child process, one per GPU, started with CUDA_VISIBLE_DEVICES naming that GPU alone.
Its parent end (gpu_session.py) sends one MeasureJob at a time; the worker answers with the typed
messages of messages.py: rows as they finish and the stage each implementation is in. If the worker
reports a lost context, dies, or stays silent past the row timeout, the parent end records CRASH or
TIMEOUT for the implementation that was running, starts a fresh worker, and goes on with the rest:
nothing already measured is lost.

What the worker measures on is a session class named in the setup: `CudaSession` (the GPU), or the
tests' fake device, which lets the scheduling be tested on machines without CUDA.

A worker can be started before its setup exists (`WorkerHandle.prestart`, at the very start of a run):
its slow start-up (importing torch, the CUDA context, cuBLAS, CUPTI: seconds) then overlaps the parent's
own (the plan, the build cache, the receipt), and the setup follows through the pipe. What each step cost
comes back in WorkerReady.startup.
"""

from __future__ import annotations

import dataclasses
import importlib
import multiprocessing
import os
import pickle
import signal
import threading
import time
import traceback

from .gpus import VISIBLE
from .messages import (BuiltExtensionRef, ContextLostReport, JobDone, MeasureJob, RowDone, StageChanged,
                       StopWorker, WorkerFailed, WorkerReady, WorkerSetup)

# When each start-up step ended, in seconds from the parent's spawn (time.monotonic() is one clock for every
# process of the host): the steps' own durations leave out what lies between them (the setup's unpickling,
# imports); this places them. Sent with WorkerReady as startup["timeline_s"].
_timeline: dict[str, float] = {}
_spawned_at: float | None = None


def _mark(step: str) -> None:
    if _spawned_at is not None:
        _timeline[step] = time.monotonic() - _spawned_at


def _load_builds(setup: WorkerSetup) -> dict:
    """Import what the parent built: a worker never compiles (GPUs do not wait on nvcc)."""
    from ..build.extension import load_extension

    return {name: load_extension(b.plan, b.folder, cached=True) if isinstance(b, BuiltExtensionRef) else b
            for name, b in setup.builds.items()}


class CudaSession:
    """The worker's device: the CUDA GPU it measures on, the harness's stream, the loaded builds."""

    @staticmethod
    def prewarm(device_index: int, cupti: bool) -> dict:
        """What every run pays before its first measurement, done before the setup arrives: torch, the CUDA
        context, cuBLAS's handle and first GEMM, the harness's own kernels, and (unless the spec times with
        events only) CUPTI's first start, whose set-up costs seconds: that one on a thread, which the first
        timing waits for (its steps come back with the first job's phases, `cupti_warmup_*`). The state it
        leaves is the one every group after the first saw already. Returns the seconds of each step."""
        out, t0 = {}, time.monotonic()
        import torch

        _mark("torch")
        out["import_s"], t0 = time.monotonic() - t0, time.monotonic()
        torch.cuda.set_device(device_index)
        torch.empty(1, device="cuda")
        torch.cuda.synchronize()
        out["cuda_context_s"], t0 = time.monotonic() - t0, time.monotonic()
        if cupti:  # seconds of set-up, started as early as it can be, on a thread beside the rest of the
            # start-up and the first group's inputs and checks; the first timing waits for it (cupti_wait_s)
            from ..contracts.timing_methods import warm_up_in_background

            warm_up_in_background()
        from . import executor  # noqa: F401  (the package's modules, as unpickling the setup would import them)

        out["import_s"] += time.monotonic() - t0
        _mark("cuda_and_imports")
        t0 = time.monotonic()
        torch.cuda.current_blas_handle()
        x = torch.ones(64, 64, device="cuda")
        (x @ x).sum().item()
        out["cublas_s"], t0 = time.monotonic() - t0, time.monotonic()
        # the first launch of a kernel loads its module (CUDA's lazy loading): the harness's own kernels,
        # which every run uses, load here (the draw's generator, the FP64 references, the sleep gate, the fill)
        from ..contracts.counter_random import CounterRandom

        g = CounterRandom(0, "cuda")
        r = (g.uniform((64, 64)) * 2 - 1 + g.integers(-2, 3, (64, 64), torch.float32) + g.normal((64, 64))).double()
        (r @ r).abs().sum().item()
        torch.cuda._sleep(1000)
        torch.empty(1024, dtype=torch.int32, device="cuda").fill_(0)  # as the L2 flush fills its buffer
        torch.cuda.synchronize()
        out["first_kernels_s"] = time.monotonic() - t0
        return out

    def __init__(self, setup: WorkerSetup):
        import torch

        from ..device import probe_device
        from .gpus import gpu_receipt

        self.device = probe_device(setup.device_index)
        if self.device is None:
            raise RuntimeError(f"no CUDA device visible to the worker ({VISIBLE}={os.environ.get(VISIBLE)!r})")
        torch.cuda.set_device(self.device.index)
        self.gpu = gpu_receipt(self.device.index)
        self.builds = _load_builds(setup)
        self._stream = torch.cuda.Stream()  # the harness's stream: non-blocking w.r.t. the legacy stream

    def executor(self, setup: WorkerSetup, emit, stage):
        from ..telemetry import Telemetry
        from .executor import ProblemExecutor

        return ProblemExecutor(setup.experiment, setup.run_id, self.device, self.builds,
                               Telemetry(self.device.index, uuid=self.gpu.get("uuid")), emit=emit, stage=stage)

    def stream(self):
        import torch

        return torch.cuda.stream(self._stream)

    def after_job(self) -> None:
        import torch

        torch.cuda.empty_cache()


def _session_class(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def worker_main(conn, setup: WorkerSetup, startup: dict | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        from ..contracts.timing_methods import take_warm_up_steps as warm_up_steps
        from .rows import ContextLost

        exp = setup.experiment
        _mark("main_imports")
        t0 = time.monotonic()
        session = _session_class(setup.backend)(setup)
        startup = {**(startup or {}), "session_s": time.monotonic() - t0}
        impls = {impl.name: impl for impl in exp.implementations}
        contracts = {c.name: c for c in exp.contracts}
        t0 = time.monotonic()
        executor = session.executor(setup, emit=lambda row: conn.send(RowDone(row)),
                                    stage=lambda impl, what: conn.send(StageChanged(impl, what)))
        startup["executor_s"] = time.monotonic() - t0  # the executor and its telemetry (NVML's handle)
        _mark("ready")
        if _timeline:
            startup["timeline_s"] = dict(_timeline)
        phases = getattr(executor, "take_phases", dict)
        conn.send(WorkerReady(session.gpu, startup))
        with session.stream():
            while True:
                job = conn.recv()
                if isinstance(job, StopWorker):
                    break
                assert isinstance(job, MeasureJob), job
                try:
                    executor.run(exp.problems[job.problem_index], contracts[job.contract],
                                 [impls[n] for n in job.implementations])
                    session.after_job()
                    conn.send(JobDone({**phases(), **warm_up_steps()}))
                except ContextLost as exc:
                    conn.send(ContextLostReport(exc.implementation, exc.status.value, str(exc)))
                    conn.close()
                    os._exit(3)  # the context is unusable: leave without touching CUDA again
    except (EOFError, BrokenPipeError):
        os._exit(0)
    except BaseException:  # noqa: BLE001 - report, then die: the parent decides what it means
        try:
            conn.send(WorkerFailed(traceback.format_exc()))
        finally:
            os._exit(4)
    os._exit(0)


def thread_lock_for_progress_bars() -> None:
    """tqdm guards its bars with a multiprocessing lock, a POSIX semaphore, made with the first bar (torch
    inductor draws one while it compiles a torch.compile row). The worker leaves by os._exit, which runs no
    finalizer, so Python's resource tracker found the semaphore at the end of every run with such a row and
    printed a 'leaked semaphore' warning into its output. The worker's bars are drawn by one process: a
    thread lock is all they need."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def _prewarm(backend: str, device_index: int, cupti: bool) -> dict:
    """The session class's start-up work that needs no setup; a failure is left for the session itself
    to meet again and report (WorkerFailed), as it did before the worker was started early."""
    try:
        cls = _session_class(backend)
        warm = getattr(cls, "prewarm", None)
        return warm(device_index, cupti) if warm is not None else {}
    except Exception:  # noqa: BLE001
        return {}


def _entry(conn, visible: str | None, backend: str, device_index: int, cupti: bool,
           spawned_at: float | None = None) -> None:
    """The child's first code: show it its one GPU before anything can initialize CUDA, warm up what needs
    no setup, then wait for the setup (pickled bytes through the pipe) and serve. `spawned_at`: the parent's
    time.monotonic() at the spawn (one clock for every process of the host), so that the interpreter's own
    start and the unpickling before this line are counted (`spawn_s`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to handle, from the first moment
    global _spawned_at
    _spawned_at = spawned_at
    _mark("entry")
    if visible is not None:
        os.environ[VISIBLE] = visible
        device_index = 0  # its one GPU is device 0 to it
    thread_lock_for_progress_bars()
    _mark("progress_lock")
    startup = _prewarm(backend, device_index, cupti)
    _mark("prewarm")
    if "entry" in _timeline:
        startup["spawn_s"] = _timeline["entry"]
    t0 = time.monotonic()
    try:
        payload = conn.recv_bytes()
    except (EOFError, OSError):  # the run ended (or failed) before it needed this worker
        os._exit(0)
    startup["setup_wait_s"] = time.monotonic() - t0
    _mark("setup_received")
    setup = pickle.loads(payload)
    _mark("setup_unpickled")
    if visible is not None:
        setup = dataclasses.replace(setup, device_index=0)
    worker_main(conn, setup, startup)


def wants_cupti(exp) -> bool:
    """Whether a worker measuring `exp` will start CUPTI: when it times anything (not --check-only, not
    every problem `time: false`) by a method other than `events`."""
    return exp.timing.method != "events" and any(entry.time for entry in exp.problems)


class WorkerHandle:
    """The parent's end of one worker process. `visible`: the CUDA_VISIBLE_DEVICES value that shows
    the worker its one GPU (None: the worker inherits the parent's environment). Made with a setup, it
    is sent at once; made by `prestart`, the worker warms up until `begin(setup)`."""

    def __init__(self, setup: WorkerSetup | None, visible: str | None = None, *,
                 backend: str | None = None, cupti: bool | None = None):
        payload = pickle.dumps(setup) if setup is not None else None  # an unpicklable setup fails before a spawn
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        backend = backend or setup.backend
        cupti = wants_cupti(setup.experiment) if cupti is None else cupti
        index = setup.device_index if setup is not None else 0
        self.spawned_at = time.monotonic()
        self.proc = ctx.Process(target=_entry, args=(child, visible, backend, index, cupti, self.spawned_at),
                                daemon=True)
        self.proc.start()
        child.close()
        self.begun = payload is not None
        if payload is not None:
            try:
                self.conn.send_bytes(payload)
            except OSError:  # it died at once: the caller's wait for WorkerReady reads the end of the pipe
                pass

    @classmethod
    def prestart(cls, visible: str | None, backend: str, cupti: bool) -> "WorkerHandle":
        """A worker started before its setup is known (the run's first moment)."""
        return cls(None, visible, backend=backend, cupti=cupti)

    def begin(self, setup: WorkerSetup) -> None:
        """Send the setup; the worker then builds its session and answers WorkerReady. Raises OSError
        (BrokenPipeError) when the worker is already gone."""
        self.begun = True
        self.conn.send_bytes(pickle.dumps(setup))

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=30)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(StopWorker())
            self.proc.join(timeout=30)
        except (BrokenPipeError, OSError):
            pass
        self.kill()
