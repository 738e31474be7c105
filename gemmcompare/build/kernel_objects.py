"""Kernel TUs compiled alone with plain nvcc, without the torch binding, one cache entry per TU: for `gemmcompare
analyze` (each kernel's ptxas resources, in seconds) and for the JIT build, which links a plan's objects from here
when every kernel TU has one (build/extension.py), so that objects compiled on another machine can be carried to
a GPU machine and only the binding is compiled there.

`gemmcompare analyze` needs each kernel's resources, not a loadable extension, and the binding (torch
headers) is most of a small build's time: 25 to 100 s per extension on two cores, against about a second for
a lab kernel TU. The TUs compile exactly as a JIT build compiles them (toolchain.kernel_cuda_flags), plus
-fPIC so that the objects can be linked into a shared library (the extension, profilers/occupancy.py): the SASS
is the same as the ninja build's (compared with cuobjdump, 2026-12-07: a lab kernel, hopper.grouped_fp8 and a
CUTLASS SM90 grouped kernel; only the anonymous namespace's path-derived name differs). Host-only sources (.cpp:
the cuBLAS binding) are not compiled here: they have no kernels.

The cache key of a TU hashes what changes its object and nothing that names the machine: nvcc's exact build and
CUTLASS's version, the arch, the flags, the include folders and local headers by their place in the package
(extensions/hopper/fp8.cuh, not /home/me/...), the TU's name and text and every local header it includes. So the
same checkout gives the same keys on a laptop and on the GPU machine: `gemmcompare build SPEC --arch sm_90a
--objects-only` here (`analyze` leaves objects too), then carry the objects; there GEMMCOMPARE_OBJECTS names their
folder and every build reads it (experiments/studies/run_on_device.sh sets it for a carried .kcache). A finished
entry is renamed into <cache>/objects/<stem>_<arch>_<key>/ from a temporary folder, so a reader never sees half of
one, and is checked against its manifest before it is used (cache_entry.py): a damaged one is compiled again.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import __version__
from ..paths import EXTENSIONS_DIR
from . import cache_entry, toolchain
from .cache_entry import default_cache_dir, usable_cache_dir
from .ptxas import parse_ptxas, summarize_for
from .request import BuildRequest, KernelSource, local_headers
from .toolchain import compiler_errors

PIC = "-Xcompiler=-fPIC"
TU_FILES = ("tu.json", "ptxas.log")  # and the object tu.json names


@dataclass
class TuObject:
    """One kernel TU's object in the cache and its ptxas report."""

    source: str  # the TU's filename
    folder: Path  # its cache entry
    object: Path
    log: str
    seconds: float  # the compile's, when it was compiled
    cached: bool


@dataclass
class KernelObjects:
    """The compiled TUs of one build request: objects, the ptxas report parsed per kernel, the log."""

    request: BuildRequest
    folder: Path  # the object cache the TUs' entries are in
    objects: list[Path]
    resources: list[dict]
    seconds: float
    cached: bool
    log: str = ""
    tus: list[TuObject] = field(default_factory=list)

    def resources_for(self, pattern: str) -> dict:
        return summarize_for(self.resources, pattern)


@dataclass
class CompileFailure:
    request: BuildRequest
    message: str  # the compiler's own words, trimmed to the errors
    log: str = field(repr=False, default="")
    seconds: float = 0.0


def _kernel_sources(sources) -> list[KernelSource]:
    return [s for s in sources if s.filename.endswith(".cu")]


def object_cache(cache_dir: Path | None = None) -> Path:
    """<cache>/objects, created if missing (an InputError when it cannot be)."""
    return usable_cache_dir(Path(cache_dir or default_cache_dir()) / "objects")


OBJECTS_ENV = "GEMMCOMPARE_OBJECTS"


def object_dirs(cache: Path) -> list[Path]:
    """Where a build looks for its kernel TUs' objects: its own cache's objects/, then each folder that
    GEMMCOMPARE_OBJECTS names (os.pathsep between them: object caches compiled elsewhere and carried here, read
    only), those that exist."""
    extra = [Path(p) for p in os.environ.get(OBJECTS_ENV, "").split(os.pathsep) if p]
    return [d for d in (cache / "objects", *extra) if d.is_dir()]


def _portable(path) -> str:
    """A path as the key sees it: inside the package's kernel sources, relative to them (the same on every
    machine that has this checkout or install); anywhere else (a user's own kernel), as it is."""
    p = Path(path).resolve()
    try:
        return f"extensions/{p.relative_to(EXTENSIONS_DIR.resolve())}"
    except ValueError:
        return str(p)


def tu_key(src: KernelSource, build) -> str:
    """The key of TU `src` compiled as `build` says (a BuildRequest or an ExtensionPlan: its arch, cuda_flags,
    include_dirs and uses_cutlass)."""
    h = hashlib.sha256()
    for part in (f"gemmcompare={__version__}", f"nvcc={toolchain.nvcc_build()}",
                 f"cutlass={toolchain.cutlass_version() if build.uses_cutlass else '-'}", f"arch={build.arch}",
                 f"flags={toolchain.kernel_cuda_flags(build.arch, tuple(build.cuda_flags))}+{PIC}",
                 f"includes={[_portable(d) for d in build.include_dirs]}", f"tu={src.filename}"):
        h.update(part.encode())
    h.update(src.read().encode())
    for header in local_headers([src], build.include_dirs):  # the same header walk the extension's cache key makes
        h.update(_portable(header).encode())
        h.update(header.read_bytes())
    return h.hexdigest()[:24]


def _entry(cache: Path, src: KernelSource, arch: str, key: str) -> Path:
    stem = "".join(c if c.isalnum() else "_" for c in Path(src.filename).stem)[:48]
    return cache / f"{stem}_{arch}_{key}"


def _load_tu(src: KernelSource, entry: Path, cached: bool) -> TuObject:
    meta = json.loads((entry / "tu.json").read_text())
    return TuObject(src.filename, entry, entry / meta["object"], (entry / "ptxas.log").read_text(),
                    float(meta["seconds"]), cached)


def _whole(src: KernelSource, entry: Path) -> TuObject | None:
    """The cache entry's object, if the entry is there and whole."""
    if not entry.is_dir() or cache_entry.damage(entry, TU_FILES) is not None:
        return None
    try:
        return _load_tu(src, entry, cached=True)
    except (OSError, ValueError, KeyError):
        return None


def cached_tu(src: KernelSource, build, caches: list[Path]) -> TuObject | None:
    """TU `src`'s object, compiled as `build` says, from the first of the object caches `caches` that has it whole;
    None when none has."""
    key = tu_key(src, build)
    return next((hit for cache in caches if (hit := _whole(src, _entry(cache, src, build.arch, key))) is not None),
                None)


def compile_tu(src: KernelSource, build, cache: Path) -> TuObject | str:
    """TU `src`'s object (compiled as `build` says) from the object cache `cache`, or compiled into it; the
    compiler's log (a str) when it fails."""
    final = _entry(cache, src, build.arch, tu_key(src, build))
    hit = _whole(src, final)
    if hit is not None:
        return hit
    shutil.rmtree(final, ignore_errors=True)  # damaged (or from before manifests): compiled again
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
    try:
        t0 = time.time()
        # a file on disk is compiled where it is, so that compiler messages name the user's own file and line
        path = Path(src.path).resolve() if src.path is not None else tmp / src.filename
        if src.path is None:
            path.write_text(src.text)
        obj = tmp / (Path(src.filename).stem + ".o")
        proc = toolchain.compile_object(path, build.arch, obj, extra_flags=(*build.cuda_flags, PIC),
                                        include_dirs=tuple(build.include_dirs), uses_cutlass=build.uses_cutlass)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            return log or f"nvcc exited with {proc.returncode} on {src.filename}"
        (tmp / "ptxas.log").write_text(log)
        (tmp / "tu.json").write_text(json.dumps({"object": obj.name, "seconds": time.time() - t0,
                                                 "source": src.filename}))
        cache_entry.seal(tmp, [*TU_FILES, obj.name])
        (tmp / "complete").write_text("")
        if not final.exists():  # else another process finished the same compile first
            os.rename(tmp, final)
        return _load_tu(src, final, cached=False)
    finally:  # renamed into place, or not needed (a failure, or another process's entry is there)
        shutil.rmtree(tmp, ignore_errors=True)


def compile_request(req: BuildRequest, cache_dir: Path | None = None) -> KernelObjects | CompileFailure:
    """Compile the request's kernel TUs (or find them in the cache). A request without .cu sources gives
    an empty KernelObjects."""
    cache = object_cache(cache_dir)
    t0, tus = time.time(), []
    for src in _kernel_sources(req.sources):
        try:
            got = compile_tu(src, req, cache)
        except Exception as exc:  # noqa: BLE001 - nvcc missing, timeout: the request's failure, not the command's
            return CompileFailure(req, f"{type(exc).__name__}: {exc}", "", time.time() - t0)
        if isinstance(got, str):
            return CompileFailure(req, compiler_errors(got) or got[-2000:], got, time.time() - t0)
        tus.append(got)
    text = "\n".join(t.log for t in tus)
    return KernelObjects(req, cache, [t.object for t in tus], parse_ptxas(text),
                         sum(t.seconds for t in tus if not t.cached), all(t.cached for t in tus), text, tus)


def compile_requests(reqs: list[BuildRequest], cache_dir: Path | None = None, jobs: int | None = None,
                     on_done: Callable[[KernelObjects | CompileFailure], None] | None = None
                     ) -> list[KernelObjects | CompileFailure]:
    """compile_request for each, several at a time, in the given order. `on_done(result)` is called in this
    thread as each one finishes (a cold compile takes minutes: the caller says which are done)."""
    return in_threads(lambda req: compile_request(req, cache_dir), reqs, jobs, on_done)


def in_threads(fn: Callable, items: list, jobs: int | None = None, on_done: Callable | None = None) -> list:
    """fn(item) for each item, several at a time (threads: nvcc runs in its own processes), the results in the
    items' order; `on_done(result)` in this thread as each finishes."""
    workers = max(1, min(len(items) or 1, jobs or os.cpu_count() or 2))
    pool = cf.ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(fn, item) for item in items]
        if on_done is not None:
            for future in cf.as_completed(futures):
                on_done(future.result())
        return [f.result() for f in futures]
    finally:  # on Ctrl-C, start no further compile (the running nvcc get the terminal's SIGINT themselves)
        pool.shutdown(wait=True, cancel_futures=True)
