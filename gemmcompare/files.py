"""The text files a run and its reports leave behind, written one way: atomically, numbers at full precision.

A reader (another process, a crash) sees the old file or the new one, never half of one; a float is
written with the 17 significant digits that give it back exactly, so no figure is rounded on disk.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a table's writer needs pandas: a run's parent and `build` import this module too
    import pandas as pd

FULL_PRECISION = "%.17g"


def slug(text: str, limit: int = 80, empty: str = "") -> str:
    """`text` as a file name: runs of anything but letters, digits, '_', '.' and '-' become one '_', cut to
    `limit` characters; `empty` when nothing is left."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:limit] or empty


def atomic_write_text(path: Path, text: str) -> Path:
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def write_csv(table: pd.DataFrame, path: Path) -> Path:
    """A table as CSV, floats at full precision, replaced atomically."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    table.to_csv(tmp, index=False, float_format=FULL_PRECISION)
    os.replace(tmp, path)
    return path


def writable_dir(path: Path, what: str) -> Path:
    """`path` as a folder this process can write into (existing, or creatable), checked before any work;
    InputError (exit 2) naming `what` (e.g. '--out') otherwise. Creates nothing."""
    from .errors import InputError

    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise InputError(f"{what} {path} is a file, not a folder")
        where = path
    else:
        where = next((p for p in path.absolute().parents if p.exists()), Path("/"))
        if not where.is_dir():
            raise InputError(f"{what} {path}: {where} is a file, not a folder")
    if not os.access(where, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path}: {where} is not writable")
    return path
