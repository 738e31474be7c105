"""The measuring worker: one process per GPU that owns the CUDA context, replaced after a fault.

An illegal memory access or a trap poisons a CUDA context for good, and a hung kernel never returns; so
kernels run in a child process. The parent (runner.py) keeps the store, sends one (problem, contract,
implementations) job at a time, and reads back rows and "stage" messages (which implementation is doing
what). If the child reports a lost context, dies, or stays silent past the row timeout, the parent
records CRASH or TIMEOUT for the implementation that was running, starts a fresh child, and goes on
with the rest: nothing already measured is lost.

Messages, child -> parent: ("ready",), ("row", Result), ("stage", implementation, what), ("done",),
("lost", implementation, status, text), ("error", text). Parent -> child: ("problem", entry_index,
contract_name, [implementation names]), ("stop",).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import traceback
from typing import Any


def worker_main(conn, payload: bytes) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        import torch

        from .build.extension import _load
        from .device import probe_device
        from .executor import ContextLost, ProblemExecutor
        from .telemetry import Telemetry

        job = pickle.loads(payload)
        exp = job["exp"]
        device = probe_device(job["device_index"])
        torch.cuda.set_device(device.index)
        builds: dict[str, Any] = {}
        for name, (kind, plan, where) in job["builds"].items():
            builds[name] = where if kind == "fail" else _load(plan, where, cached=True)
        impls = {impl.name: impl for impl in exp.implementations}
        contracts = {c.name: c for c in exp.contracts}
        telemetry = Telemetry(device.index)
        executor = ProblemExecutor(exp, job["run_id"], device, builds, telemetry,
                                   emit=lambda row: conn.send(("row", row)),
                                   stage=lambda impl, what: conn.send(("stage", impl, what)))
        stream = torch.cuda.Stream()  # the harness's stream: non-blocking with respect to the legacy stream
        conn.send(("ready",))
        with torch.cuda.stream(stream):
            while True:
                msg = conn.recv()
                if msg[0] == "stop":
                    break
                _, entry_index, contract_name, names = msg
                try:
                    executor.run(exp.problems[entry_index], contracts[contract_name], [impls[n] for n in names])
                    torch.cuda.empty_cache()
                    conn.send(("done",))
                except ContextLost as exc:
                    conn.send(("lost", exc.implementation, exc.status.value, str(exc)))
                    conn.close()
                    os._exit(3)  # the context is unusable: leave without touching CUDA again
    except (EOFError, BrokenPipeError):
        os._exit(0)
    except BaseException:  # noqa: BLE001 - report, then die: the parent decides what it means
        try:
            conn.send(("error", traceback.format_exc()))
        finally:
            os._exit(4)
    os._exit(0)


class WorkerHandle:
    def __init__(self, payload: bytes):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child, payload), daemon=True)
        self.proc.start()
        child.close()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=30)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
            self.proc.join(timeout=30)
        except (BrokenPipeError, OSError):
            pass
        self.kill()
