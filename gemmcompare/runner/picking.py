"""A tuned row's pick for one group, in the measuring worker (gemmcompare/tuning says what tuning is).

For each candidate that can run the problem and built: the model's predicted time (and NVIDIA's estimate, where
nvidia-matmul-heuristics is installed); the best select.KEEP_PREDICTED of either go on (with every one the model
cannot describe). The pick cache answers if it
has this key. Otherwise each candidate is checked once on a fresh uniform draw (a candidate that fails is
left out, never picked: its rows are not emitted, its reason is kept), and the rest race (select.race).
The executor then measures the winner as the tuned row, from scratch.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from ..build.extension import BuildFailure, LoadedExtension
from ..contracts.timing import Launcher, Timer
from ..implementations.base import Implementation
from ..results import Status
from ..tuning.cache import PickCache, pick_key
from ..tuning.select import Pick, brief_settings, narrow, race
from ..tuning.tuned import Picked, TunedImplementation


class NoPick(Exception):
    """No candidate can be raced on this problem: the tuned row's SKIP (or BUILD_ERROR) says why."""

    def __init__(self, reason: str, build_failed: bool):
        super().__init__(reason)
        self.build_failed = build_failed


@contextlib.contextmanager
def quiet(executor, tuned_name: str):
    """The executor's emitted rows collected instead of sent (a candidate's FAIL is no row of the run), and
    its stage reports made under the tuned row's name (the parent blames a hang on the row it knows)."""
    emit, stage, dropped = executor.emit, executor.stage, []
    executor.emit = dropped.append
    executor.stage = lambda impl, what: stage(tuned_name, f"tuning, {impl}: {what}")
    try:
        yield dropped
    finally:
        executor.emit, executor.stage = emit, stage


def _predicted(executor, runnable, entry, contract) -> tuple[dict[str, float | None], dict[str, float]]:
    """Each candidate's predicted time on this device (None where the model cannot describe it), and NVIDIA's
    estimate of those it can describe (nvidia-matmul-heuristics' CUTLASS configurations, where installed)."""
    from ..model.predict import predict_row
    from .executor import base_row, copy_build_resources
    from .predictions import model_device, nvidia_heuristics

    try:
        spec = model_device(executor.device)
    except (KeyError, ValueError):
        return {c.name: None for c, _ in runnable}, {}
    out, nvidia = {}, {}
    for c, ext in runnable:
        row = base_row(executor.run_id, executor.exp, entry, contract, c.name, c.family, c.params)
        if isinstance(ext, LoadedExtension):
            copy_build_resources(row, ext.resources_for(c.kernel_filter_for(contract)), c)
        try:
            prediction = predict_row(row, spec)
        except (KeyError, ValueError):
            out[c.name] = None
            continue
        out[c.name] = prediction.predicted_ms
        estimate = nvidia_heuristics(row, prediction)
        if estimate and estimate.get("runtime_ms"):
            nvidia[c.name] = estimate["runtime_ms"]
    return out, nvidia


def pick(executor, tuned: TunedImplementation, entry, contract) -> Picked:
    """The winner of `tuned` for this (problem, contract); raises NoPick when nothing can be raced, and
    ContextLost (under the tuned row's name) when a candidate breaks the CUDA context."""
    from .executor import ContextLost, base_row

    p, t0 = entry.problem, time.monotonic()
    excluded: dict[str, str] = {}
    runnable: list[tuple[Implementation, Any]] = []
    any_built_failed = False
    for c in tuned.candidates:
        s, ext = c.check(p, contract, executor.device), executor.builds.get(c.name)
        if not s:
            excluded[c.name] = s.reason
        elif isinstance(ext, BuildFailure):
            excluded[c.name], any_built_failed = "build failed: " + ext.message.strip().splitlines()[0][:200], True
        else:
            runnable.append((c, ext))
    if not runnable:
        shown = "; ".join(f"{n}: {r}" for n, r in list(excluded.items())[:3])
        raise NoPick(f"no candidate of {len(tuned.candidates)} can run here ({shown})", any_built_failed)
    predicted, nvidia = _predicted(executor, runnable, entry, contract)
    raced, left = narrow(predicted, nvidia=nvidia)
    excluded.update(left)
    runnable = [(c, ext) for c, ext in runnable if c.name in raced]
    cache = PickCache(_cache_dir(runnable))
    key = pick_key(gpu=executor.device.name, cc=executor.device.arch, driver=_driver(executor),
                   problem={"m": p.m, "n": p.n, "k": p.k, "batch": p.batch}, contract=contract.describe(),
                   tuned=tuned.name, builds={c.name: _build_id(ext) for c, ext in runnable},
                   l2=executor.exp.timing.l2)
    by_name = {c.name: c for c, _ in runnable}
    hit = cache.get(key)
    if hit is not None and hit.winner in by_name:
        return Picked(tuned, by_name[hit.winner], hit)
    with executor._phase("tuning_s"):
        draw = executor._draw("uniform", p, contract)
        launchers, keep = [], []
        with quiet(executor, tuned.name):
            for c, ext in runnable:
                row = base_row(executor.run_id, executor.exp, entry, contract, c.name, c.family, c.params)
                try:
                    prepared = executor._check_one(c, row, ext, draw, contract, p.k, "uniform")
                except ContextLost as exc:
                    raise ContextLost(f"tuning {tuned.name}: candidate {c.name}: {exc}", tuned.name, exc.status) from exc
                if prepared is None:
                    excluded[c.name] = f"{row.status.value} in its check: {row.reason}"[:300]
                    continue
                resets = [prepared.reset_output] if contract.beta != 0.0 else None
                launchers.append(Launcher(c.name, prepared.launch, [], resets))
                keep.append(prepared)  # alive until the race is over
        if not launchers:
            raise NoPick(f"every candidate failed its check ({'; '.join(list(excluded.values())[:2])})", False)
        settings = brief_settings(executor.exp.timing)
        timer = Timer(settings, executor.device.l2_bytes)
        def measure(names):
            got = timer.measure(launchers)
            for name, m in got.items():  # a hang or a CUDA error: the worker must go, the tuned row is to blame
                if m.fatal:
                    status = Status.TIMEOUT if isinstance(m.error, TimeoutError) else Status.CRASH
                    raise ContextLost(f"tuning {tuned.name}: candidate {name}: {m.error}", tuned.name, status)
            return got

        winner, medians, counts, failed = race([ln.name for ln in launchers], measure)
        excluded.update(failed)
        del keep, draw
    if winner is None:
        raise NoPick(f"no candidate gave a race time ({'; '.join(list(failed.values())[:2])})", False)
    result = Pick(winner, medians, counts, excluded,
                  {n: ms for n, ms in predicted.items() if ms is not None}, time.monotonic() - t0, False, nvidia)
    cache.put(key, result, gpu=executor.device.name, driver=_driver(executor), problem=f"{p.m}x{p.n}x{p.k}",
              contract=contract.name, tuned=tuned.name)
    return Picked(tuned, by_name[winner], result)


def _cache_dir(runnable) -> Path | None:
    """The build cache the candidates came from (the pick cache lives beside their builds)."""
    return next((Path(ext.path).parent for _, ext in runnable if isinstance(ext, LoadedExtension)), None)


def _build_id(ext) -> str:
    return ext.plan.module_name if isinstance(ext, LoadedExtension) else "no build"


def _driver(executor) -> str | None:
    fn = getattr(executor.telemetry, "driver_version", None)
    return fn() if fn is not None else None
