"""A tuned row's pick for one group, in the measuring worker (gemmcompare/tuning says what tuning is).

For each candidate that can run the problem and built: the model's predicted time (and NVIDIA's estimate, where
nvidia-matmul-heuristics is installed); the best select.KEEP_PREDICTED of either go on (with every one the model
cannot describe). The pick cache answers if it
has this key. Otherwise each candidate is checked once on a fresh uniform draw (a candidate that fails is
left out, never picked: its rows are not emitted, its reason is kept), and the rest race (select.race).
The executor then measures the winner as the tuned row, from scratch.

The race knows the executor only through the RaceBench it is handed (ProblemExecutor._race_bench): the run,
the GPU and the builds, and the group's phase timer, draw and check of one implementation.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from ..build.extension import BuildFailure, LoadedExtension
from ..contracts.precision import PrecisionContract
from ..contracts.timing import Launcher, Timer, summarize
from ..device import DeviceInfo
from ..implementations.base import Implementation, Prepared
from ..problems import GemmProblem
from ..results import Result, Status
from ..spec import Experiment
from ..tuning.cache import PickCache, pick_key
from ..tuning.select import Pick, brief_settings, contenders, narrow, oracle_settings, race, runoff_settings
from ..tuning.tuned import Picked, TunedImplementation
from .inputs import Draw
from .rows import ContextLost, Emit, Stage, base_row, copy_build_resources


class CheckOne(Protocol):
    def __call__(self, impl: Implementation, row: Result, ext: Any, draw: Draw, contract: PrecisionContract,
                 k: int, fixture: str, *, emit: Emit, stage: Stage) -> Prepared | None:
        """Prepare, poison, launch once and check `impl` on `draw` as the run checks every implementation:
        the Prepared on a PASS, else None after sending the row (its FAIL or CRASH) to `emit`; what it is
        doing goes to `stage`. Raises ContextLost when the CUDA context is gone."""


@dataclass(frozen=True)
class RaceBench:
    """What a tuned row's race uses of the group's executor, which makes one for each race.

    exp, run_id, device, builds: the run's spec (correctness and timing settings), id, GPU and builds.
    stage: the executor's stage reports (the race reports under the tuned row's name: the parent knows no
        candidate). phase(name): a block timed as one of the group's phases (phases.GROUPS).
    draw(fixture, problem, contract): fresh inputs and their FP64 references. check: see CheckOne.
    driver(): the driver's version, for the pick cache's key (None where telemetry cannot say)."""

    exp: Experiment
    run_id: str
    device: DeviceInfo
    builds: Mapping[str, Any]
    stage: Stage
    phase: Callable[[str], AbstractContextManager]
    draw: Callable[[str, GemmProblem, PrecisionContract], Draw]
    check: CheckOne
    driver: Callable[[], str | None]


class NoPick(Exception):
    """No candidate can be raced on this problem: the tuned row's SKIP (or BUILD_ERROR) says why."""

    def __init__(self, reason: str, build_failed: bool):
        super().__init__(reason)
        self.build_failed = build_failed


def quiet(bench: RaceBench, tuned_name: str) -> tuple[list[Result], Stage]:
    """Where a candidate's check sends its row and its stage reports: the rows collected, not emitted (a
    candidate's FAIL is no row of the run), the reports made under the tuned row's name (the parent blames a
    hang on the row it knows)."""
    return [], lambda impl, what: bench.stage(tuned_name, f"tuning, {impl}: {what}")


def _predicted(bench: RaceBench, runnable, entry, contract) -> tuple[dict[str, float | None], dict[str, float]]:
    """Each candidate's predicted time on this device (None where the model cannot describe it), and NVIDIA's
    estimate of those it can describe (nvidia-matmul-heuristics' CUTLASS configurations, where installed)."""
    from ..model.predict import predict_row
    from .predictions import model_device, nvidia_heuristics

    try:
        spec = model_device(bench.device)
    except (KeyError, ValueError):
        return {c.name: None for c, _ in runnable}, {}
    out, nvidia = {}, {}
    for c, ext in runnable:
        row = base_row(bench.run_id, bench.exp, entry, contract, c.name, c.family, c.params)
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


def pick(bench: RaceBench, tuned: TunedImplementation, entry, contract) -> Picked:
    """The winner of `tuned` for this (problem, contract); raises NoPick when nothing can be raced, and
    ContextLost (under the tuned row's name) when a candidate breaks the CUDA context."""
    p, t0 = entry.problem, time.monotonic()
    excluded: dict[str, str] = {}
    runnable: list[tuple[Implementation, Any]] = []
    any_built_failed = False
    for c in tuned.candidates:
        s, ext = c.check(p, contract, bench.device), bench.builds.get(c.name)
        if not s:
            excluded[c.name] = s.reason
        elif isinstance(ext, BuildFailure):
            excluded[c.name], any_built_failed = "build failed: " + ext.message.strip().splitlines()[0][:200], True
        else:
            runnable.append((c, ext))
    if not runnable:
        shown = "; ".join(f"{n}: {r}" for n, r in list(excluded.items())[:3])
        raise NoPick(f"no candidate of {len(tuned.candidates)} can run here ({shown})", any_built_failed)
    predicted, nvidia = _predicted(bench, runnable, entry, contract)
    raced, left = narrow(predicted, nvidia=nvidia)
    excluded.update(left)
    oracle = bench.exp.timing.oracle
    in_race = [(c, ext) for c, ext in runnable if c.name in raced]
    cache = PickCache(_cache_dir(in_race))
    key = pick_key(gpu=bench.device.name, cc=bench.device.arch, driver=bench.driver(),
                   problem=_problem_key(p), contract=contract.describe(),
                   tuned=tuned.name, builds={c.name: _build_id(c, ext) for c, ext in in_race},
                   l2=bench.exp.timing.l2)
    by_name = {c.name: c for c, _ in in_race}
    hit = None if oracle else cache.get(key)  # an oracle measures the pick it makes, never a reused one
    if hit is not None and hit.winner in by_name:
        return Picked(tuned, by_name[hit.winner], hit)
    with bench.phase("tuning_s"):
        draw = bench.draw("uniform", p, contract)
        launchers, keep = {}, []
        dropped, stage = quiet(bench, tuned.name)
        for c, ext in (runnable if oracle else in_race):  # the oracle checks (and measures) every candidate
            row = base_row(bench.run_id, bench.exp, entry, contract, c.name, c.family, c.params)
            try:
                prepared = bench.check(c, row, ext, draw, contract, p.k, "uniform", emit=dropped.append, stage=stage)
            except ContextLost as exc:
                raise ContextLost(f"tuning {tuned.name}: candidate {c.name}: {exc}", tuned.name, exc.status) from exc
            if prepared is None:
                excluded[c.name] = f"{row.status.value} in its check: {row.reason}"[:300]
                continue
            resets = [prepared.reset_output] if contract.beta != 0.0 else None
            launchers[c.name] = Launcher(c.name, prepared.launch, [], resets, kernels=prepared.kernels_per_launch)
            keep.append(prepared)  # alive until the race is over
        racing = [name for name in launchers if name in by_name]
        if not racing:
            raise NoPick(f"every candidate failed its check ({'; '.join(list(excluded.values())[:2])})", False)
        timed = _timed(tuned, bench, launchers)
        winner, medians, counts, failed = race(racing, timed(brief_settings(bench.exp.timing)))
        excluded.update(failed)
        runoff_ms, runoff_n, race_winner = {}, {}, None
        close = contenders(medians)
        if close:  # the race's closest, again with the run's protocol: the runoff's best is the pick
            best, runoff_ms, runoff_n, _ = race(close, timed(runoff_settings(bench.exp.timing)))
            if best is not None and best != winner:
                race_winner, winner = winner, best
        oracle_ms, oracle_ci = ({}, {}) if not oracle or winner is None else \
            _oracle(timed(oracle_settings(bench.exp.timing)), list(launchers))
        del keep, draw
    if winner is None:
        raise NoPick(f"no candidate gave a race time ({'; '.join(list(failed.values())[:2])})", False)
    result = Pick(winner, medians, counts, excluded,
                  {n: ms for n, ms in predicted.items() if ms is not None}, time.monotonic() - t0, False, nvidia,
                  runoff_ms, runoff_n, race_winner, oracle_ms, oracle_ci)
    cache.put(key, result, gpu=bench.device.name, driver=bench.driver(), problem=f"{p.m}x{p.n}x{p.k}",
              contract=contract.name, tuned=tuned.name)
    return Picked(tuned, by_name[winner], result)


def _timed(tuned: TunedImplementation, bench: RaceBench, launchers: dict[str, Launcher]):
    """measure(settings) -> measure(names): the named launchers timed together under `settings`. A hang or a
    CUDA error in any of them ends the worker, blamed on the tuned row (the only name the parent knows)."""
    def under(settings):
        timer = Timer(settings, bench.device.l2_bytes)

        def measure(names):
            got = timer.measure([launchers[n] for n in names])
            for name, m in got.items():
                if m.fatal:
                    status = Status.TIMEOUT if isinstance(m.error, TimeoutError) else Status.CRASH
                    raise ContextLost(f"tuning {tuned.name}: candidate {name}: {m.error}", tuned.name, status)
            return got
        return measure
    return under


def _oracle(measure, names: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """Every checked candidate timed with the full protocol: {name: median ms}, {name: the median's relative
    95% CI half-width}. A candidate without samples is left out (its error is the race's concern)."""
    got = measure(names)
    medians, ci = {}, {}
    for name in names:
        m = got.get(name)
        samples = list(getattr(m, "samples_ms", None) or [])
        if m is None or getattr(m, "error", None) is not None or not samples:
            continue
        s = summarize(samples)
        medians[name], ci[name] = s.median, s.median_ci_rel
    return medians, ci


def _problem_key(p) -> dict[str, Any]:
    """The problem as the pick cache keys it: M, N, K and batch; a grouped problem's every group M and its layout
    too (two routings of one token count share m = sum(M) but not their best tile)."""
    key = {"m": p.m, "n": p.n, "k": p.k, "batch": p.batch}
    if p.is_grouped:
        key.update(ms=list(p.ms), layout=p.layout, capacity=p.capacity)
    return key


def _cache_dir(runnable) -> Path | None:
    """The build cache the candidates came from (the pick cache lives beside their builds)."""
    return next((Path(ext.path).parent for _, ext in runnable if isinstance(ext, LoadedExtension)), None)


def _build_id(candidate, ext) -> str:
    """What a candidate's code is, for the pick cache's key: a built extension's module name (it hashes sources,
    compiler and flags); for a candidate with no build (a Python row: Triton's FP8 configurations), a digest of
    its code's modules (`code_modules` of gemmcompare.implementations, else the module that defines its class)
    and of the versions of torch and triton that compile it, so that a changed kernel or library is a new key,
    as a changed build is."""
    if isinstance(ext, LoadedExtension):
        return ext.plan.module_name
    import hashlib
    import importlib.metadata as md
    import inspect

    from .. import implementations

    folder = Path(implementations.__file__).parent
    names = getattr(candidate, "code_modules", None)
    files = [folder / f"{n}.py" for n in names] if names else [Path(inspect.getsourcefile(type(candidate)) or "")]
    h = hashlib.sha256()
    for path in files:
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(str(path).encode())
    for name in ("torch", "triton"):
        try:
            h.update(f"{name}={md.version(name)}".encode())
        except md.PackageNotFoundError:
            h.update(f"{name}=-".encode())
    return "python " + h.hexdigest()[:16]
