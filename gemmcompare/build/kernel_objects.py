"""An implementation's kernel TUs compiled alone with plain nvcc, without the torch binding: their ptxas
resources (registers, shared memory, spills) in seconds, cached.

`gemmcompare analyze` needs each kernel's resources, not a loadable extension, and the binding (torch
headers) is most of a build's time: 25 to 100 s per extension on two cores, against about a second for
a lab kernel TU. The TUs compile exactly as a JIT build compiles them (toolchain.kernel_cuda_flags), plus
-fPIC so that the objects can be linked into a shared library (profilers/occupancy.py). Host-only
sources (.cpp: the cuBLAS binding) are not compiled: they have no kernels.

The cache key hashes what changes the objects: nvcc's and CUTLASS's versions, the arch, the flags, the
include folders, every TU's name and text and every local header it includes. A finished entry is
renamed into <cache>/objects/<key>/ from a temporary folder, so a reader never sees half of one, and is
checked against its manifest before it is used (cache_entry.py): a damaged one is compiled again.
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
from . import cache_entry, toolchain
from .extension import compiler_errors, default_cache_dir, plan_extensions, usable_cache_dir
from .ptxas import parse_ptxas, summarize_for
from .request import BuildRequest

PIC = "-Xcompiler=-fPIC"
ENTRY_FILES = ("objects.json", "resources.json", "ptxas.log")  # and the objects objects.json lists


@dataclass
class KernelObjects:
    """The compiled TUs of one build request: objects, the ptxas report parsed per kernel, the log."""

    request: BuildRequest
    folder: Path
    objects: list[Path]
    resources: list[dict]
    seconds: float
    cached: bool
    log: str = ""

    def resources_for(self, pattern: str) -> dict:
        return summarize_for(self.resources, pattern)


@dataclass
class CompileFailure:
    request: BuildRequest
    message: str  # the compiler's own words, trimmed to the errors
    log: str = field(repr=False, default="")
    seconds: float = 0.0


def _kernel_sources(req: BuildRequest):
    return [s for s in req.sources if s.filename.endswith(".cu")]


def cache_key(req: BuildRequest) -> str:
    plan = plan_extensions([req])[0]
    h = hashlib.sha256()
    for part in (f"gemmcompare={__version__}", f"nvcc={toolchain.nvcc_version()}",
                 f"cutlass={toolchain.cutlass_version() if req.uses_cutlass else '-'}", f"arch={req.arch}",
                 f"flags={toolchain.kernel_cuda_flags(req.arch, tuple(req.cuda_flags))}+{PIC}",
                 f"includes={req.include_dirs}"):
        h.update(part.encode())
    for src in sorted(_kernel_sources(req), key=lambda s: s.filename):
        h.update(src.filename.encode())
        h.update(src.read().encode())
    for header in plan._local_headers():  # the same header walk the extension's cache key makes
        h.update(str(header).encode())
        h.update(header.read_bytes())
    return h.hexdigest()[:24]


def compile_request(req: BuildRequest, cache_dir: Path | None = None) -> KernelObjects | CompileFailure:
    """Compile the request's kernel TUs (or find them in the cache). A request without .cu sources gives
    an empty KernelObjects."""
    cache = usable_cache_dir(Path(cache_dir or default_cache_dir()) / "objects")
    key = cache_key(req)
    final = cache / f"{''.join(c if c.isalnum() else '_' for c in req.group)[:40]}_{req.arch}_{key}"
    if final.is_dir():
        if cache_entry.damage(final, ENTRY_FILES) is None:
            return _load(req, final, cached=True)
        shutil.rmtree(final, ignore_errors=True)  # damaged (or from before manifests): compiled again
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
    t0, logs, objects = time.time(), [], []
    try:
        for src in _kernel_sources(req):
            path = Path(src.path).resolve() if src.path is not None else tmp / src.filename
            if src.path is None:
                path.write_text(src.text)
            obj = tmp / (Path(src.filename).stem + ".o")
            proc = toolchain.compile_object(path, req.arch, obj, extra_flags=(*req.cuda_flags, PIC),
                                            include_dirs=tuple(req.include_dirs), uses_cutlass=req.uses_cutlass)
            log = proc.stdout + proc.stderr
            logs.append(log)
            if proc.returncode != 0:
                return CompileFailure(req, compiler_errors(log) or log[-2000:], log, time.time() - t0)
            objects.append(obj.name)
        seconds = time.time() - t0
        text = "\n".join(logs)
        (tmp / "ptxas.log").write_text(text)
        (tmp / "resources.json").write_text(json.dumps(parse_ptxas(text)))
        (tmp / "objects.json").write_text(json.dumps({"objects": objects, "seconds": seconds}))
        cache_entry.seal(tmp, [*ENTRY_FILES, *objects])
        (tmp / "complete").write_text("")
        if final.exists():  # another process finished the same compile first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.rename(tmp, final)
        return _load(req, final, cached=False)
    except Exception as exc:  # noqa: BLE001 - nvcc missing, timeout: the request's failure, not the command's
        return CompileFailure(req, f"{type(exc).__name__}: {exc}", "", time.time() - t0)
    finally:
        if tmp.exists() and not (tmp / "complete").exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _load(req: BuildRequest, folder: Path, cached: bool) -> KernelObjects:
    meta = json.loads((folder / "objects.json").read_text())
    return KernelObjects(req, folder, [folder / o for o in meta["objects"]],
                         json.loads((folder / "resources.json").read_text()), float(meta["seconds"]), cached,
                         (folder / "ptxas.log").read_text())


def compile_requests(reqs: list[BuildRequest], cache_dir: Path | None = None, jobs: int | None = None,
                     on_done: Callable[[KernelObjects | CompileFailure], None] | None = None
                     ) -> list[KernelObjects | CompileFailure]:
    """compile_request for each, several at a time (nvcc runs in its own processes), in the given order.
    `on_done(result)` is called in this thread as each one finishes (a cold compile takes minutes: the
    caller says which are done)."""
    workers = max(1, min(len(reqs) or 1, jobs or os.cpu_count() or 2))
    pool = cf.ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(compile_request, r, cache_dir) for r in reqs]
        if on_done is not None:
            for future in cf.as_completed(futures):
                on_done(future.result())
        return [f.result() for f in futures]
    finally:  # on Ctrl-C, start no further compile (the running nvcc get the terminal's SIGINT themselves)
        pool.shutdown(wait=True, cancel_futures=True)
