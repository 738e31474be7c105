"""Saving a report's figures on several processes at once.

Drawing and writing a figure (PNG and SVG) takes a few tenths of a second of one core, and a report has
one per plot kind and contract: seconds at the end of every run, one after another. While a pool is
running, `save_figure` (plots/common.py) pickles each figure and hands it to the pool, returning its paths at
once; whatever reads a saved file (the HTML embeds the PNGs) calls `wait_for(path)` first, and leaving
`saving_in_parallel()` waits for the rest, so a report is never written with a figure missing. A figure
that does not pickle is saved in this process, as without a pool. Within `saying(on_saved)`, every wait
says each figure it finds written (a command's progress, progress.py).

    prestart()                      # `run`: while it measures, so the workers have imported matplotlib
    with saving_in_parallel():      # build_report
        plots = make_plots(rows, out)
        html = embed_png(wait_for(plot.png))

A caller with many figures to draw (the dashboard) hands the pool whole drawing jobs instead (`call`): a job's
inputs pickle in a fraction of a figure's time, and the drawing itself then runs on every core.

The workers are forked from a fresh forkserver process (never from the caller, which may hold a CUDA
context and threads), that imported the plotting modules once. Without a pool (`prestart` not called,
or a platform without forkserver), figures are saved in this process, one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

PRELOAD = ["gemmcompare.report.plots.common"]
MAX_WORKERS = 8  # a report rarely has more figures than this drawing at once

_pool: ProcessPoolExecutor | None = None
_pending: dict[Path, Future] = {}
_active = False
_on_saved: Callable[[list[Path]], None] | None = None  # saying()'s listener


def _ready() -> int:
    return os.getpid()


def _ignore_ctrl_c() -> None:
    """Each drawing process's initializer: a Ctrl-C reaches the whole process group, and is the caller's to
    handle (it shuts the pool down); without this every idle worker printed a KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def prestart(workers: int | None = None, preload: tuple[str, ...] = ()) -> bool:
    """Start the pool now (its start-up, about a second, then overlaps the caller's work). False where
    this platform has no forkserver or the machine one core. preload: more modules the workers import
    before they fork (those of the functions given to `call`)."""
    global _pool
    if _pool is not None:
        return True
    workers = workers or min(MAX_WORKERS, (os.cpu_count() or 1) - 1)
    if workers < 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD + list(preload))
    _pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_ignore_ctrl_c)
    for _ in range(workers):  # fork every worker now, not when the first figures arrive
        _pool.submit(_ready)
    return True


def running() -> bool:
    return _pool is not None


def shutdown() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None


@contextmanager
def saving_in_parallel():
    """Within it, save_figure hands figures to the prestarted pool (if any); on leaving, every figure is on
    disk (a worker's exception is raised here)."""
    global _active
    _active = _pool is not None
    try:
        yield
        wait_all()
    finally:
        _active = False
        _pending.clear()


@contextmanager
def saying(on_saved: Callable[[list[Path]], None]):
    """Within it, `on_saved(paths)` hears of each figure found written, in this thread, whenever a figure is
    waited for (wait_for, wait_all): saving is most of a large report's time, and its progress is worth
    saying even while the page waits for one figure in particular."""
    global _on_saved
    _on_saved = on_saved
    try:
        yield
    finally:
        _on_saved = None


def submit(fig, paths: list[Path], save) -> bool:
    """Hand `fig` to the pool to be written as `paths` by `save(fig, paths)`; False (the caller saves it
    itself) when no pool is active or the figure does not pickle."""
    if not _active:
        return False
    try:
        payload = pickle.dumps(fig)
    except Exception:  # noqa: BLE001 - an unpicklable artist: saved in this process instead
        return False
    future = _pool.submit(_save_pickled, payload, [str(p) for p in paths], save)
    for path in paths:
        _pending[Path(path)] = future
    return True


def call(fn, *args) -> Future:
    """fn(*args) on the prestarted pool: a figure drawn and saved whole in a worker (a dashboard page), so that
    only its inputs are pickled, not the figure. fn must be importable by name."""
    if _pool is None:
        raise RuntimeError("rendering.call needs a running pool (prestart)")
    return _pool.submit(fn, *args)


def _save_pickled(payload: bytes, paths: list[str], save) -> None:
    save(pickle.loads(payload), [Path(p) for p in paths])


def pending() -> int:
    """How many figures handed to the pool have not been waited for yet (each a PNG and an SVG)."""
    return len(set(_pending.values()))


def wait_all() -> None:
    """Every figure handed to the pool so far, on disk."""
    _drain()


def wait_for(path: Path | str) -> Path:
    """`path` once it is written (at once when it was saved in this process)."""
    future = _pending.get(Path(path))
    if future is not None:
        _drain(until=future)
    return Path(path)


def _drain(until: Future | None = None) -> None:
    """Wait for the pending figures in the order they finish, each said to `saying`'s listener, until `until`
    is written (all of them without it)."""
    paths: dict[Future, list[Path]] = {}
    for path, future in _pending.items():
        paths.setdefault(future, []).append(path)
    for future in as_completed(paths):
        future.result()
        for path in paths[future]:
            _pending.pop(path, None)
        if _on_saved is not None:
            _on_saved(paths[future])
        if future is until:
            return
