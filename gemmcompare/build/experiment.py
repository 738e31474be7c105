"""Building what an experiment needs: every implementation with at least one runnable row, merged into
as few extensions as possible, built in parallel (cached). A failed build is kept per implementation,
where it becomes a BUILD_ERROR row; the rest go on."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from ..arch import parse_arch
from ..device import DeviceInfo
from ..progress import Progress
from .extension import BuildFailure, LoadedExtension, build_extensions, plan_extensions
from .kernel_objects import compile_tu, in_threads, object_cache
from .toolchain import compiler_errors

DEFAULT_ARCH_CC = 90  # what to compile for when there is neither a device nor --arch (the H200 we measure on)


@dataclass
class ExperimentBuilds:
    by_impl: dict[str, Union[LoadedExtension, BuildFailure]] = field(default_factory=dict)
    target_cc: int = DEFAULT_ARCH_CC

    @property
    def failures(self) -> dict[str, BuildFailure]:
        return {name: b for name, b in self.by_impl.items() if isinstance(b, BuildFailure)}


def target_cc(device: DeviceInfo | None, arch: str | None) -> int:
    if device is not None:
        return device.cc_int
    return parse_arch(arch)[0] if arch else DEFAULT_ARCH_CC


def build_experiment(exp, device: DeviceInfo | None, *, arch: str | None = None, cache_dir: Path | None = None,
                     jobs: int | None = None, progress: bool = True, on_done=None, merge: bool = True) -> ExperimentBuilds:
    """Build every implementation of `exp` that has a row it can run on `device` (or on --arch), and every
    candidate of a tuned one. `on_done(plan, result)` is called as each extension is ready (build_extensions).
    `merge=False`: each implementation in an extension of its own, as a process that builds one implementation
    (profile's driver) builds it, so that such processes find theirs cached."""
    outcome = ExperimentBuilds(target_cc=target_cc(device, arch))
    wanted = _wanted(exp, device, outcome.target_cc)
    if not wanted:
        return outcome
    if merge:
        plans = plan_extensions([r for _, r in wanted])
        module_of = {p.merge_key: p.module_name for p in plans}
        modules = [module_of[req.merge_key] for _, req in wanted]
    else:
        alone = [plan_extensions([req])[0] for _, req in wanted]
        plans = list({p.module_name: p for p in alone}.values())  # two implementations may ask the same
        modules = [p.module_name for p in alone]
    built = build_extensions(plans, cache_dir=cache_dir, jobs=jobs, progress=progress, on_done=on_done)
    for (impl, _), module in zip(wanted, modules):
        outcome.by_impl[impl.name] = built[module]
    return outcome


def _wanted(exp, device: DeviceInfo | None, cc: int) -> list:
    """(implementation, build request) of every implementation with a row it can run, and of every candidate of
    a tuned one."""
    from ..tuning.tuned import with_candidates

    wanted = []
    for impl in with_candidates(exp.implementations):  # a tuned row's candidates, each under its own name
        if not impl.supports_device(device):
            continue
        if not any(impl.admits(p.problem, c) for p in exp.problems for c in exp.contracts if impl.planned_under(c)):
            continue
        if device is None and impl.min_cc > cc:
            continue
        req = impl.build_request(impl.target_arch(cc))
        if req is not None:
            wanted.append((impl, req))
    return wanted


@dataclass
class ObjectsOutcome:
    target_cc: int
    compiled: int = 0
    cached: int = 0
    failures: dict[str, str] = field(default_factory=dict)  # TU filename -> the compiler's errors
    seconds: float = 0.0


def compile_experiment_objects(exp, device: DeviceInfo | None, *, arch: str | None = None,
                               cache_dir: Path | None = None, jobs: int | None = None, on_done=None,
                               on_total=None) -> ObjectsOutcome:
    """Every kernel TU the experiment's build would compile, compiled alone into the object cache
    (<cache>/objects, build/kernel_objects.py), without torch bindings: on a machine without a GPU, the objects a
    GPU machine's build then links instead of compiling them (carried there: GEMMCOMPARE_OBJECTS).
    `on_total(count)` once the TUs are known, `on_done(filename, result)` as each is ready (a TuObject, or the
    compiler's log as a str)."""
    outcome = ObjectsOutcome(target_cc(device, arch))
    cache = object_cache(cache_dir)
    tus = {}  # one compile per TU and arch, however many extensions hold it
    for plan in plan_extensions([r for _, r in _wanted(exp, device, outcome.target_cc)]):
        for src in plan.sources:
            if src.filename.endswith(".cu"):
                tus.setdefault((src.filename, plan.arch), (src, plan))
    if on_total:
        on_total(len(tus))
    t0 = time.time()

    def one(item):
        src, plan = item
        try:
            return src.filename, compile_tu(src, plan, cache)
        except Exception as exc:  # noqa: BLE001 - nvcc missing, a timeout: this TU's failure
            return src.filename, f"{type(exc).__name__}: {exc}"

    def finished(done) -> None:
        filename, result = done
        if isinstance(result, str):
            outcome.failures[filename] = compiler_errors(result) or result[-2000:]
        elif result.cached:
            outcome.cached += 1
        else:
            outcome.compiled += 1
        if on_done:
            on_done(filename, result)

    in_threads(one, list(tus.values()), jobs, finished)
    outcome.seconds = time.time() - t0
    return outcome


def build_in_steps(exp, device: DeviceInfo | None, progress: Progress, **options) -> ExperimentBuilds:
    """build_experiment as one step of a command (progress.py): the build's own bar on a terminal, else a
    line per extension as it is built or fails (cached ones are only counted, as `build` logs them); then
    the step's line. `options`: build_experiment's (arch, cache_dir, jobs, merge)."""
    counts = {"built": 0, "cached": 0, "failed": 0}

    def finished(plan, result) -> None:
        if isinstance(result, BuildFailure):
            counts["failed"] += 1
            line = f"failed {plan.module_name} ({result.seconds:.1f} s)"
        elif result.cache_hit:
            counts["cached"] += 1
            return
        else:
            counts["built"] += 1
            line = f"built {plan.module_name} ({result.build_seconds:.1f} s)"
        if not progress.bars:  # on a terminal the bar says it
            progress.say(f"  {line}")

    with progress.step("building") as step:
        outcome = build_experiment(exp, device, progress=progress.bars, on_done=finished, **options)
        step.done = "extensions: " + (", ".join(f"{n} {k}" for k, n in counts.items() if n) or "none needed")
    return outcome
