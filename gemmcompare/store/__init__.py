"""Where results live: the SQLite store (database), a folder per run (run_folder), and finding a run by
id, prefix, 'latest' or path (lookup)."""

from .database import RUN_COLUMNS, Store  # noqa: F401
from .lookup import DEFAULT_STORE, RunSource, SourceError, load_source  # noqa: F401
from .run_folder import RunFolder, load_result_file, rows_from  # noqa: F401
