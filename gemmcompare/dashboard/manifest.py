"""What each page of a dashboard was drawn from, kept in its output folder (dashboard-manifest.json): per page,
a hash of exactly its inputs (the rows it plots and their runs' receipts, the options, the code that draws it)
with the files it wrote and what the index needs from it. A build draws only the pages whose hash changed and
deletes the files of the pages it no longer draws.

The code is hashed as source: every module of the package that the drawing modules import, directly or
through others, read with ast (a new release, or an edit of any of them, redraws every page), and the
versions of the libraries that draw. The modules that find and read runs are left out: what they read (the
rows and receipts) is hashed instead.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import pickle
from importlib import metadata
from pathlib import Path

import pandas as pd

from .. import __version__
from ..files import atomic_write_text

MANIFEST = "dashboard-manifest.json"
FORMAT = 1
PACKAGE = Path(__file__).resolve().parents[1]
DRAWING = "gemmcompare.dashboard"  # its modules and what they import draw the pages
READING = ("gemmcompare.dashboard.runs", "gemmcompare.store", "gemmcompare.history")  # hashed by their output
LIBRARIES = ("matplotlib", "numpy", "pandas")


def digest(*parts) -> str:
    """sha256 of JSON-able parts (keys sorted; anything else by its str)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _pickled(value) -> bytes:
    """value pickled without the memo, so that the bytes depend on the values only, not on which of them
    happen to be one object: floats exactly, dicts in their order."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=5)
    pickler.fast = True  # no memo: rows hold no cycles
    pickler.dump(value)
    return buf.getvalue()


def cell_digests(rows: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(contract, problem) -> a hash of that cell's rows, every column at full precision."""
    cells: dict[tuple[str, str], list] = {}
    keys = zip(rows["contract"].astype(str), rows["problem"].astype(str)) if len(rows) else ()
    for key, record in zip(keys, rows.to_numpy(dtype=object).tolist()):
        cells.setdefault(key, []).append(record)
    header = _pickled([str(c) for c in rows.columns])
    return {key: hashlib.sha256(header + _pickled(records)).hexdigest() for key, records in cells.items()}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["gemmcompare", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            sources = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]) if node.level else node.module
            base = (base or "").rstrip(".")
            sources = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for source in sources:
            parts = source.split(".")
            found.update(m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in known)
    return found


def _stamp(modules: dict[str, Path]) -> str:
    """What the package's sources and the libraries are now, by size and modification time: while it stays
    the same, the fingerprint is taken as it was (reading and parsing every module again took a fifth of a
    build that draws nothing)."""
    files = sorted((name, p.stat().st_size, p.stat().st_mtime_ns) for name, p in modules.items())
    return digest(__version__, files, [_version(lib) for lib in LIBRARIES])


def _version(lib: str) -> str:
    try:
        return metadata.version(lib)
    except metadata.PackageNotFoundError:
        return "?"


def code_fingerprint(known: dict | None = None) -> dict:
    """{'hash': a hash of the drawing code, 'stamp': _stamp()}: gemmcompare's version, the source of every
    module the dashboard's modules import (transitively, but not into READING) and the drawing libraries'
    versions. `known`: the last build's, kept while its stamp holds."""
    known_modules = _modules()
    stamp = _stamp(known_modules)
    if known and known.get("stamp") == stamp and known.get("hash"):
        return {"hash": known["hash"], "stamp": stamp}
    todo = [m for m in known_modules if m == DRAWING or m.startswith(DRAWING + ".")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or any(name == r or name.startswith(r + ".") for r in READING):
            continue
        seen.add(name)
        todo.extend(_imported(name, known_modules[name], known_modules) - seen)
    h = hashlib.sha256(f"gemmcompare {__version__}".encode())
    for name in sorted(seen):
        h.update(f"\0{name}\0".encode() + known_modules[name].read_bytes())
    for lib in LIBRARIES:
        h.update(f"\0{lib} {_version(lib)}".encode())
    return {"hash": h.hexdigest(), "stamp": stamp}


class Manifest:
    """The manifest of one output folder: the pages of the last build (read at start), those of this one."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.path = self.out / MANIFEST
        self.old: dict[str, dict] = {}
        self.new: dict[str, dict] = {}
        self.code: dict | None = None  # code_fingerprint's, of the last build and then of this one
        try:
            data = json.loads(self.path.read_text())
            if data.get("format") == FORMAT and isinstance(data.get("pages"), dict):
                self.old, self.code = data["pages"], data.get("code")
        except (OSError, ValueError, AttributeError):
            pass  # none yet, or unreadable: every page is drawn

    def unchanged(self, page: str, inputs: str) -> dict | None:
        """The last build's entry for `page` when it was drawn from the same inputs and its files are all
        still there (it is kept for this build); else None."""
        entry = self.old.get(page)
        if entry and entry.get("inputs") == inputs and all((self.out / f).is_file() for f in entry.get("files", [])):
            self.new[page] = entry
            return entry
        return None

    def record(self, page: str, inputs: str, files: list[str], summary: dict | None = None) -> None:
        self.new[page] = {"inputs": inputs, "files": files, "summary": summary or {}}

    def stale(self) -> list[str]:
        """Files the last build wrote that this one did not (pages no longer drawn, figures renamed)."""
        kept = {f for entry in self.new.values() for f in entry["files"]}
        return sorted({f for entry in self.old.values() for f in entry.get("files", [])} - kept)

    def save(self, keep_old: bool = False) -> None:
        """Write this build's pages; keep_old: and the last build's that this one did not reach (a build
        stopped half way: those are checked again next time, and what is stale is still known)."""
        pages = {**self.old, **self.new} if keep_old else self.new
        atomic_write_text(self.path, json.dumps({"format": FORMAT, "code": self.code, "pages": pages}, indent=1,
                                                sort_keys=True))
