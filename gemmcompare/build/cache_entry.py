"""The build cache (where it is, whether it can be one), one finished build in it, and how to tell that it is
whole before it is loaded.

A build is renamed into the cache atomically, so no reader sees half of one; but its files can be damaged
afterwards (a full disk, a copy cut short, an editor, a hostile hand). A truncated .so kills the process
that loads it with SIGBUS, and a corrupt resources.json fails to parse. So a build records the size and
SHA-256 of each of its files in manifest.json before it is renamed into place, and every load checks them
first: an entry that fails is rebuilt, never loaded.

Builds in progress live in `.tmp-<module>-*` folders beside the entries; one left by a build that was
killed is removed by the next builder of that module (under its lock), or at once after an interrupt.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path

from ..errors import InputError

MANIFEST = "manifest.json"


def default_cache_dir() -> Path:
    """Where builds are cached unless --cache-dir says: $GEMMCOMPARE_CACHE_DIR, else the user's cache folder."""
    env = os.environ.get("GEMMCOMPARE_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gemmcompare"


def usable_cache_dir(cache: Path) -> Path:
    """The build cache folder, created if missing; an InputError (exit 2) when it cannot be one."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"the build cache {cache} is not a folder (--cache-dir or GEMMCOMPARE_CACHE_DIR names "
                         f"it)") from None
    except OSError as exc:
        raise InputError(f"cannot create the build cache {cache}: {exc.strerror or exc}") from None
    if not cache.is_dir():
        raise InputError(f"the build cache {cache} is not a folder")
    if not os.access(cache, os.W_OK | os.X_OK):
        raise InputError(f"the build cache {cache} is not writable (--cache-dir names another)")
    return cache


def entry_files(module_name: str) -> tuple[str, ...]:
    """The files of an entry that its manifest covers (everything a load reads)."""
    return (f"{module_name}.so", "resources.json", "build_seconds")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def seal(folder: Path, files) -> None:
    """Record the size and digest of each of `files` (names in `folder`) of a finished build, before it is
    renamed into the cache."""
    listed = {name: {"size": (folder / name).stat().st_size, "sha256": _sha256(folder / name)} for name in files}
    (folder / MANIFEST).write_text(json.dumps({"files": listed}, indent=1))


def damage(folder: Path, required) -> str | None:
    """What is wrong with a cache entry (a file missing, cut short or changed since it was built, or one of
    `required` not in its manifest), or None when every file its manifest lists matches."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return "it has no manifest (a build from an older gemmcompare, or one that never finished)"
    except (OSError, ValueError) as exc:
        return f"its manifest cannot be read ({exc})"
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not set(required) <= set(files):
        return "its manifest does not list the entry's files"
    for name, want in sorted(files.items()):
        path = folder / name
        if not isinstance(want, dict):
            return "its manifest does not list the entry's files"
        try:
            size = path.stat().st_size
            if size != want.get("size"):
                return f"{name} is {size:,} bytes, {want.get('size')!s} bytes when it was built"
            if _sha256(path) != want.get("sha256"):
                return f"{name} has changed since it was built"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror or exc})"
    return None


def remove_leftovers(cache: Path, module_name: str) -> None:
    """Remove the temporary folders of builds of this module that never finished. Call with its lock held."""
    for tmp in cache.glob(f".tmp-{module_name}-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def clean_after_interrupt(cache: Path, module_names) -> None:
    """After the builds of these modules were killed: remove what they left, for each module no other
    process is building now (its lock is free)."""
    for name in module_names:
        try:
            with open(cache / f"{name}.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                remove_leftovers(cache, name)
        except OSError:  # locked by another process's build, or the cache is gone: leave it
            continue
