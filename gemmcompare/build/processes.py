"""Running builds in child processes that one Ctrl-C stops, all of them, at once.

Each build runs in a child process that makes itself the leader of a process group of its own, so that
ninja and every nvcc, cicc and ptxas below it share that group. The terminal sends Ctrl-C to its
foreground group only, which is this process: it then kills each child's whole group (SIGTERM, then
SIGKILL for what is left after a grace period), waits for them, and lets the KeyboardInterrupt go on.
Nothing outlives the command, and no child goes on building after it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Sequence

GRACE_S = 3.0  # after SIGTERM, before SIGKILL (nvcc removes its temporary files on SIGTERM)


@dataclass(frozen=True)
class ChildFailed:
    """What a child sends back instead of a result when its call raised, or what stands for a child that
    died without sending anything."""

    message: str


def _child(conn, fn: Callable, args: tuple) -> None:
    os.setpgrp()  # a group of its own: Ctrl-C reaches the parent only, and killpg reaches ninja and nvcc
    try:
        result = fn(*args)
    except BaseException:  # noqa: BLE001 - reported to the parent, which decides
        result = ChildFailed(traceback.format_exc(limit=5))
    try:
        conn.send(result)
        conn.close()
    except (BrokenPipeError, ConnectionResetError):  # the parent is gone (killed): nobody left to tell
        pass


def run_children(calls: Sequence[tuple[Callable, tuple]], workers: int,
                 on_result: Callable[[int, Any], None]) -> None:
    """Call each fn(*args) in a child process, at most `workers` at a time, and on_result(index, value) in
    the order they finish (value: what fn returned, or ChildFailed). If anything interrupts this (Ctrl-C
    above all), every child's process group is killed before the exception goes on."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold CUDA or threads
    todo = list(enumerate(calls))[::-1]
    running: dict[Any, tuple[int, Any]] = {}  # the receiving end of each child's pipe -> (index, process)
    try:
        while todo or running:
            while todo and len(running) < max(1, workers):
                index, (fn, args) = todo.pop()
                receive, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
                proc.start()
                send.close()
                running[receive] = (index, proc)
            for conn in wait(list(running)):
                index, proc = running.pop(conn)
                try:
                    value = conn.recv()
                except Exception:  # noqa: BLE001 - EOF or a message cut short: the child died
                    proc.join()
                    value = ChildFailed(f"the build process died (exit code {proc.exitcode})")
                conn.close()
                proc.join()
                on_result(index, value)
    except BaseException:
        kill_groups([proc for _, proc in running.values()])
        raise


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # not a group leader yet (still starting), or the whole group is gone
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    except PermissionError:
        pass


def kill_groups(procs, grace_s: float = GRACE_S) -> None:
    """Stop each child and everything in its process group: SIGTERM, a grace period, then SIGKILL."""
    for proc in procs:
        _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
    for proc in procs:  # whatever is left in the group (a leader that is gone can still have ninja or nvcc)
        _signal_group(proc.pid, signal.SIGKILL)
    for proc in procs:
        proc.join(1.0)
