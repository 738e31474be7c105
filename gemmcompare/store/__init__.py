"""Where results live: the SQLite store (database), a folder per run (run_folder), and the runs a command is
given, found by path, store or id (sources; file_kinds says what a file that is not a run is).

The names below load their module on first use: the store reads through pandas, and a command that only
needs DEFAULT_STORE (every command's --store default) must not pay for it.
"""

from __future__ import annotations

import importlib

DEFAULT_STORE = "gemmcompare.db"

_LAZY = {"RUN_COLUMNS": "database", "Store": "database", "new_run_id": "database", "RunSource": "sources", "SourceError": "sources",
         "load_source": "sources", "find_sources": "sources", "RunFolder": "run_folder", "load_result_file": "run_folder", "rows_from": "run_folder"}

__all__ = ["DEFAULT_STORE", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
