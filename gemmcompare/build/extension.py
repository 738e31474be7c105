"""JIT-building extensions through torch.utils.cpp_extension (ninja), cached, in parallel.

Requests with the same merge key become one extension: the kernel TUs (no torch headers: seconds each)
plus one generated binding .cpp (the only TU with torch headers). The cache key hashes everything that
changes the binary: every source's text, the text of every local header they can include, the flags,
the arch, and the versions of nvcc, torch, CUTLASS and the ABI. A finished build lives in
<cache>/<module>/ and is renamed there atomically from a temporary folder, under a file lock, so two
processes never see half a build; a cache hit only imports the module (well under a second).

Each build runs in its own process: it captures the compiler's full output (for the ptxas report and
for errors) without touching this process's file descriptors, and lets builds run side by side. Each
build process leads a process group of its own, so one Ctrl-C stops every build and every nvcc below it
(processes.py). A cache entry is checked against the manifest its build wrote before it is loaded, and
a damaged one is rebuilt (cache_entry.py). Flags reach nvcc through build.ninja and /bin/sh quoted, each
as the one argument it was (flags.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from ..errors import BuildError, ToolchainError
from ..paths import ABI_HEADER, ABI_INCLUDE_DIR
from ..progress import bar as progress_bar
from . import cache_entry, toolchain
from .binding import EntryPoint, render_binding
from .cache_entry import default_cache_dir, usable_cache_dir
from .flags import ninja_shell_arg
from .kernel_objects import cached_tu, object_dirs
from .processes import ChildFailed, run_children
from .ptxas import parse_ptxas, summarize_for
from .request import BuildRequest, KernelSource, local_headers
from .toolchain import compiler_errors


@dataclass
class ExtensionPlan:
    """One extension to build: merged from every request sharing a merge key."""

    group: str
    arch: str
    sources: list[KernelSource]
    entries: list[EntryPoint]
    cuda_flags: tuple[str, ...]
    include_dirs: tuple[str, ...]
    uses_cutlass: bool
    link_flags: tuple[str, ...] = ()
    merge_key: tuple = ()  # the BuildRequest.merge_key every request merged into this plan shares
    _key: str | None = field(default=None, repr=False)

    @property
    def all_include_dirs(self) -> list[str]:
        dirs = [str(ABI_INCLUDE_DIR), *self.include_dirs, *toolchain.library_include_dirs()]
        if self.uses_cutlass:
            dirs += toolchain.cutlass_include_dirs()
        return dirs

    def cuda_flags_full(self) -> list[str]:
        return toolchain.kernel_cuda_flags(self.arch, self.cuda_flags)

    def cache_key(self) -> str:
        if self._key is None:
            h = hashlib.sha256()
            for part in (
                f"abi={ABI_HEADER.read_text()}",
                f"gemmcompare={__version__}",
                f"nvcc={toolchain.nvcc_version()}",
                f"torch={toolchain.torch_version()}",  # torch's own string, read without importing torch
                f"cutlass={toolchain.cutlass_version() if self.uses_cutlass else '-'}",
                f"arch={self.arch}",
                f"flags={self.cuda_flags_full()}",
                f"link={list(self.link_flags)}",
                f"includes={self.include_dirs}",
                f"entries={[(e.symbol, e.has_workspace) for e in self.entries]}",
            ):
                h.update(part.encode())
            for src in sorted(self.sources, key=lambda s: s.filename):
                h.update(src.filename.encode())
                h.update(src.read().encode())
            for header in self._local_headers():
                h.update(str(header).encode())
                h.update(header.read_bytes())
            self._key = h.hexdigest()
        return self._key

    def _local_headers(self) -> list[Path]:
        return local_headers(self.sources, self.include_dirs)

    @property
    def module_name(self) -> str:
        safe = "".join(ch if ch.isalnum() else "_" for ch in self.group)[:40]
        return f"gc_{safe}_{self.arch}_{self.cache_key()[:16]}"


def plan_extensions(requests: list[BuildRequest]) -> list[ExtensionPlan]:
    """Merge requests into extensions. Raises BuildError when two requests disagree on a source file."""
    plans: dict[tuple, ExtensionPlan] = {}
    for req in requests:
        plan = plans.get(req.merge_key)
        if plan is None:
            plan = plans[req.merge_key] = ExtensionPlan(req.group, req.arch, [], [], req.cuda_flags,
                                                        req.include_dirs, req.uses_cutlass, req.link_flags,
                                                        req.merge_key)
        known = {s.filename: s for s in plan.sources}
        stems = {Path(s.filename).stem for s in plan.sources}
        for src in req.sources:
            if src.filename in known:
                if known[src.filename].read() != src.read():
                    raise BuildError(f"build group {req.group}: two different sources named {src.filename}")
                continue
            if Path(src.filename).stem in stems:  # ninja names objects by stem: a.cu and a.cpp would clash
                raise BuildError(f"build group {req.group}: two sources share the name {Path(src.filename).stem}")
            plan.sources.append(src)
            known[src.filename] = src
            stems.add(Path(src.filename).stem)
        if req.entry not in {e.symbol for e in plan.entries}:
            plan.entries.append(EntryPoint(req.entry, req.has_workspace))
    return list(plans.values())


# ---------------------------------------------------------------------------------------------------
# Loaded extensions


class Entry:
    def __init__(self, module, index: int, symbol: str):
        self.symbol = symbol
        self._launch, self._ws, self._i = module.launch, module.workspace_bytes, index

    def launch(self, a, b, c, dims, codes, alpha, beta, workspace, bias, scale_a, scale_b, *grouped):
        """Enqueue one GEMM. codes: abi_codes(contract); bias, scale_a, scale_b: FP32 tensors, empty when the
        contract has none (scale_a/scale_b: an FP8 contract's scales, read by the kernel inside its launch).
        grouped (ABI 4, with 11 dims): group_offsets (CUDA int64, groups + 1) and group_m_host (CPU int64, one M
        per group), tensors the caller keeps alive; nothing for a dense or batched problem."""
        self._launch(self._i, a, b, c, dims, codes, alpha, beta, workspace, bias, scale_a, scale_b, *grouped)

    def workspace_bytes(self, a, b, c, dims, codes, alpha, beta, workspace, bias, scale_a, scale_b, *grouped) -> int:
        return self._ws(self._i, a, b, c, dims, codes, alpha, beta, workspace, bias, scale_a, scale_b, *grouped)


@dataclass
class LoadedExtension:
    """A finished build. Its module is imported on first use (a launch), not when the cache is looked up:
    importing it imports torch, seconds that `build` and the parent of a run do not need to spend."""

    imported: Any  # the module once imported (None until then)
    plan: ExtensionPlan
    resources: list[dict]
    build_seconds: float
    cache_hit: bool
    path: Path

    @property
    def module(self):
        if self.imported is None:
            self.imported = sys.modules.get(self.plan.module_name) or _load_module(
                self.plan.module_name, self.path / f"{self.plan.module_name}.so")
        return self.imported

    def entry(self, symbol: str) -> Entry:
        names = list(self.module.entries())
        if symbol not in names:
            raise BuildError(f"extension {self.plan.module_name} has no entry {symbol} (has {names})")
        return Entry(self.module, names.index(symbol), symbol)

    def resources_for(self, pattern: str) -> dict:
        return summarize_for(self.resources, pattern)


@dataclass(frozen=True)
class BuildAttempt:
    """What one build process reports back: a finished folder in the cache, or the compiler's log."""

    ok: bool
    seconds: float
    folder: str = ""
    cached: bool = False  # another process finished the same build first
    error: str = ""
    log: str = ""


@dataclass
class BuildFailure:
    plan: ExtensionPlan
    message: str  # the compiler's own words, trimmed to the errors
    log: str
    seconds: float


def _load_module(name: str, so_path: Path):
    import torch  # noqa: F401  (the extension links against torch's libraries, loaded by this import)

    loader = importlib.machinery.ExtensionFileLoader(name, str(so_path))
    spec = importlib.util.spec_from_file_location(name, str(so_path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def cached_entry(cache_dir: Path, plan: ExtensionPlan, note: Callable[[str], None] | None = None) -> Path | None:
    """The plan's finished build in the cache, if it is there and whole (a damaged one is rebuilt)."""
    final = cache_dir / plan.module_name
    if not final.is_dir():
        return None
    damage = cache_entry.damage(final, cache_entry.entry_files(plan.module_name))
    if damage is None:
        return final
    if note is not None and (final / "complete").exists():
        note(f"cache entry {final} is damaged: {damage}; rebuilding it")
    return None


def _plan_payload(plan: ExtensionPlan) -> dict:
    return {
        "module_name": plan.module_name,
        # files on disk are compiled where they are, so compiler messages name the user's own file and line
        "sources": [(s.filename, None, str(Path(s.path).resolve())) if s.path is not None else (s.filename, s.text, None)
                    for s in plan.sources],
        "binding": render_binding(plan.entries),
        # torch writes these into build.ninja as they are, and ninja runs the command through /bin/sh
        "cuda_flags": [ninja_shell_arg(f) for f in plan.cuda_flags_full()],
        "include_dirs": plan.all_include_dirs,  # torch quotes these itself
        "link_flags": [ninja_shell_arg(f) for f in plan.link_flags],
    }


def _build_in_process(payload: dict, cache_dir: str, max_jobs: int) -> BuildAttempt:
    """Runs in a build process: build one extension into the cache."""
    cache = Path(cache_dir)
    name = payload["module_name"]
    final = cache / name
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(cache / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per extension across processes
        if final.is_dir() and cache_entry.damage(final, cache_entry.entry_files(name)) is None:
            return BuildAttempt(True, 0.0, str(final), cached=True)
        cache_entry.remove_leftovers(cache, name)  # of a build that was killed
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=cache))
        src_dir = tmp / "src"
        src_dir.mkdir()
        paths = []
        for filename, text, path in payload["sources"]:
            if path is not None:
                paths.append(path)
            else:
                (src_dir / filename).write_text(text)
                paths.append(str(src_dir / filename))
        binding = src_dir / "binding.cpp"
        binding.write_text(payload["binding"])
        log_path = tmp / "build.log"
        os.environ["MAX_JOBS"] = str(max_jobs)
        toolchain.ensure_cuda_home()
        # Kernel TUs already in the object cache (all of them, or none is used) are linked as objects: ninja then
        # compiles the binding (and any .cpp) alone. Their ptxas reports head the log, where the resources are read.
        prebuilt = payload.get("prebuilt") or []
        linked = {filename for filename, _, _ in prebuilt}
        to_compile = [p for (filename, _, _), p in zip(payload["sources"], paths) if filename not in linked]
        paths.append(str(binding))
        ok, error = _cpp_extension_load(log_path, name, [*to_compile, str(binding)], payload,
                                        [*payload["link_flags"], *(obj for _, obj, _ in prebuilt)])
        if prebuilt:
            names = ", ".join(sorted(linked))
            header = f"linked {len(prebuilt)} kernel TU object(s) from the object cache (build/kernel_objects.py): {names}\n"
            reports = "".join(report for _, _, report in prebuilt)
            if not ok:  # an object that does not link here: compile every TU as ninja would, once
                header = (f"{len(prebuilt)} kernel TU object(s) from the object cache ({names}) did not link ({error}): "
                          f"every TU compiled here instead\n{log_path.read_text(errors='replace')}")
                ok, error = _cpp_extension_load(log_path, name, paths, payload, payload["link_flags"])
                reports = ""
            log_path.write_text(header + reports + log_path.read_text(errors="replace"))
        log_text = log_path.read_text(errors="replace")
        seconds = time.time() - t0
        if not ok:
            shutil.rmtree(tmp, ignore_errors=True)
            return BuildAttempt(False, seconds, error=error, log=log_text)
        (tmp / "resources.json").write_text(json.dumps(parse_ptxas(log_text)))
        (tmp / "build_seconds").write_text(str(seconds))
        cache_entry.seal(tmp, cache_entry.entry_files(name))
        (tmp / "complete").write_text("")
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)  # atomic: readers see no folder or a complete one
        return BuildAttempt(True, seconds, str(final))


def _cpp_extension_load(log_path: Path, name: str, sources: list[str], payload: dict,
                        ldflags: list[str]) -> tuple[bool, str]:
    """torch's JIT build of `sources` into the build folder beside log_path, its output written to log_path;
    (whether it built, the error)."""
    saved = os.dup(1), os.dup(2)
    ok, error = True, ""
    with open(log_path, "w") as log:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            from torch.utils import cpp_extension

            # A second load of one name in a process (the build again after cached objects did not link) would be
            # renamed NAME_v1 by torch's versioner, and the module could not be imported as NAME: start afresh.
            getattr(getattr(cpp_extension, "JIT_EXTENSION_VERSIONER", None), "entries", {}).pop(name, None)
            cpp_extension.load(
                name=name,
                sources=sources,
                extra_cuda_cflags=payload["cuda_flags"],
                extra_include_paths=payload["include_dirs"],
                extra_ldflags=ldflags,
                build_directory=str(log_path.parent),
                with_cuda=True,
                verbose=True,
            )
        except BaseException as exc:  # noqa: BLE001 - a failed build is data
            ok, error = False, f"{type(exc).__name__}: {exc}"
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    return ok, error


def prebuilt_objects(plan: ExtensionPlan, cache: Path) -> list:
    """The plan's kernel TUs' objects from the object caches (<cache>/objects and the folders in
    GEMMCOMPARE_OBJECTS: build/kernel_objects.py), when every kernel TU has one there; else [] (ninja compiles
    them all, as it always did)."""
    dirs = object_dirs(cache)
    kernels = [s for s in plan.sources if s.filename.endswith(".cu")]
    if not kernels or not dirs:
        return []
    try:
        found = [cached_tu(src, plan, dirs) for src in kernels]
    except ToolchainError:  # no nvcc to key on: the build itself says what is missing
        return []
    return found if all(found) else []


def build_extensions(plans: list[ExtensionPlan], cache_dir: Path | None = None, jobs: int | None = None,
                     progress: bool = True, on_done: Callable[[ExtensionPlan, Any], None] | None = None
                     ) -> dict[str, LoadedExtension | BuildFailure]:
    """Build (or load from cache) every plan; returns module_name -> LoadedExtension | BuildFailure.

    Builds run in parallel worker processes; each one failing becomes a BuildFailure and the rest go on.
    """
    cache = usable_cache_dir(Path(cache_dir or default_cache_dir()))
    results: dict[str, LoadedExtension | BuildFailure] = {}
    todo = []
    for plan in plans:
        hit = cached_entry(cache, plan, note=lambda text: print(f"note: {text}", file=sys.stderr))
        if hit:  # whole (its manifest checked); imported where it is launched
            results[plan.module_name] = load_extension(plan, hit, cached=True, import_now=False)
            if on_done:
                on_done(plan, results[plan.module_name])
        else:
            todo.append(plan)
    if not todo:
        return results
    cpus = os.cpu_count() or 2
    workers = max(1, min(len(todo), jobs or cpus, cpus))
    max_jobs = max(1, cpus // workers)
    bar = progress_bar(len(todo), "building", "ext", enabled=progress)

    def finished(index: int, out) -> None:
        plan = todo[index]
        if isinstance(out, ChildFailed):  # the build process itself failed or died
            out = BuildAttempt(False, 0.0, error=f"build process failed: {out.message}")
        if out.ok:
            try:
                results[plan.module_name] = load_extension(plan, Path(out.folder), cached=out.cached)
            except Exception as exc:  # noqa: BLE001 - e.g. an undefined symbol at import
                results[plan.module_name] = BuildFailure(plan, f"built but failed to load: {exc}", "", out.seconds)
        else:
            msg = compiler_errors(out.log) or out.error
            results[plan.module_name] = BuildFailure(plan, msg, out.log, out.seconds)
        if on_done:
            on_done(plan, results[plan.module_name])
        bar.set_postfix_str(plan.group[:30])
        bar.update(1)

    calls = [(_build_in_process, ({**_plan_payload(p), "prebuilt": [
        (t.source, ninja_shell_arg(str(t.object)), t.log) for t in prebuilt_objects(p, cache)]}, str(cache), max_jobs))
        for p in todo]
    try:
        run_children(calls, workers, finished)
    except KeyboardInterrupt:  # every build process is gone by now: remove what they left half done
        cache_entry.clean_after_interrupt(cache, [p.module_name for p in todo])
        raise
    finally:
        bar.close()
    return results


def load_extension(plan: ExtensionPlan, folder: Path, cached: bool, import_now: bool = True) -> LoadedExtension:
    """A finished build (from the cache folder the builder left it in), its module imported now unless
    `import_now` is False (then on first use). A fresh build is imported at once: an undefined symbol is
    its BUILD_ERROR, not a crash later."""
    resources = json.loads((folder / "resources.json").read_text()) if (folder / "resources.json").exists() else []
    secs = float((folder / "build_seconds").read_text()) if (folder / "build_seconds").exists() else 0.0
    ext = LoadedExtension(None, plan, resources, secs, cached, folder)
    if import_now:
        ext.module  # noqa: B018 - the import is the point
    return ext
