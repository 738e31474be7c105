"""The measuring worker: a child process that owns the CUDA context, replaced after a fault.

An illegal memory access or a trap poisons a CUDA context for good, and a hung kernel never returns; so
kernels run in a child process. The parent (parent.py) keeps the store and sends one MeasureJob at a
time; the worker answers with the typed messages of messages.py: rows as they finish and the stage each
implementation is in. If the worker reports a lost context, dies, or stays silent past the row timeout,
the parent records CRASH or TIMEOUT for the implementation that was running, starts a fresh worker, and
goes on with the rest: nothing already measured is lost.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback

from .messages import (BuiltExtensionRef, ContextLostReport, JobDone, MeasureJob, RowDone, StageChanged,
                       StopWorker, WorkerFailed, WorkerReady, WorkerSetup)


def _load_builds(setup: WorkerSetup) -> dict:
    from ..build.extension import load_extension

    return {name: load_extension(b.plan, b.folder, cached=True) if isinstance(b, BuiltExtensionRef) else b
            for name, b in setup.builds.items()}


def worker_main(conn, setup: WorkerSetup) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        import torch

        from ..device import probe_device
        from ..telemetry import Telemetry
        from .executor import ContextLost, ProblemExecutor

        exp = setup.experiment
        device = probe_device(setup.device_index)
        torch.cuda.set_device(device.index)
        impls = {impl.name: impl for impl in exp.implementations}
        contracts = {c.name: c for c in exp.contracts}
        executor = ProblemExecutor(exp, setup.run_id, device, _load_builds(setup), Telemetry(device.index),
                                   emit=lambda row: conn.send(RowDone(row)),
                                   stage=lambda impl, what: conn.send(StageChanged(impl, what)))
        stream = torch.cuda.Stream()  # the harness's stream: non-blocking with respect to the legacy stream
        conn.send(WorkerReady())
        with torch.cuda.stream(stream):
            while True:
                job = conn.recv()
                if isinstance(job, StopWorker):
                    break
                assert isinstance(job, MeasureJob), job
                try:
                    executor.run(exp.problems[job.problem_index], contracts[job.contract],
                                 [impls[n] for n in job.implementations])
                    torch.cuda.empty_cache()
                    conn.send(JobDone())
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


class WorkerHandle:
    """The parent's end of one worker process."""

    def __init__(self, setup: WorkerSetup):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, setup), daemon=True)
        self.proc.start()
        child.close()

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
