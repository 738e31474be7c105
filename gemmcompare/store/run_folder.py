"""A run's folder: results.csv and results.json (rows with their receipts) and receipt.json, rewritten as
rows arrive; and the reader of such folders and files (committed baselines are folders like these)."""

from __future__ import annotations

import gzip
import json
import lzma
import os
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..files import FULL_PRECISION, atomic_write_text
from ..lazy import LazyModule
from ..results import COLUMNS, JSON_COLUMNS, Result, decode_record
from .validation import check_receipt, check_records, check_rows

pd = LazyModule("pandas")  # the store's readers need pandas; `build` and a run's start do not


class RunFolder:
    """runs/<run_id>/: results.csv and results.json (rows with their receipts), rewritten as rows arrive."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.path / "results.csv"
        self.json_path = self.path / "results.json"
        self.records: list[dict[str, Any]] = []
        self.receipt: dict[str, Any] = {}
        # Each row is encoded once (JSON and CSV) and kept: encoding every row again at every flush made a
        # run's folder cost O(rows^2) time (a 290-row sweep spent a tenth of a second per row near its
        # end), enough to hold back a parent that several GPUs send rows to.
        self._texts: list[str] = []
        self._lines: list[str] = []
        if self.json_path.exists():  # resuming: keep what the folder already holds, encoded as add() keeps it
            try:
                data = json.loads(self.json_path.read_text())
                if not isinstance(data, dict):
                    raise ValueError(f"a {type(data).__name__}, not a mapping")
                self.receipt = check_receipt(data.get("receipt"), str(self.json_path))
                check_records(data.get("results", []), str(self.json_path))
            except (OSError, ValueError, RecursionError) as exc:
                raise InputError(f"{self.json_path}: cannot continue this run folder: {str(exc)[:300]}") from None
            for rec in data.get("results", []):
                self.records.append({k: (json.dumps(v) if k in JSON_COLUMNS and not isinstance(v, str) else v)
                                     for k, v in rec.items()})

    def write_receipt(self, receipt: dict[str, Any]) -> None:
        self.receipt = receipt
        atomic_write_text(self.path / "receipt.json", json.dumps(receipt, indent=2, default=str))
        self._flush()

    def add(self, result: Result) -> None:
        self.add_many([result])

    def add_many(self, results: Iterable[Result]) -> None:
        """Add rows and rewrite the files once (a run adds one row at a time; a merge, a source at once)."""
        self.records.extend(r.to_record() for r in results)
        self._flush()

    def _flush(self) -> None:
        for r in self.records[len(self._texts):]:
            self._texts.append(json.dumps(decode_record(r), indent=1, default=str))
            self._lines.append(pd.DataFrame([{c: r.get(c) for c in COLUMNS}], columns=COLUMNS)
                               .to_csv(index=False, header=False, float_format=FULL_PRECISION))
        atomic_write_text(self.json_path, '{"receipt": ' + json.dumps(self.receipt, indent=1, default=str)
                          + ',\n"results": [\n' + ",\n".join(self._texts) + "\n]}\n")
        atomic_write_text(self.csv_path, pd.DataFrame(columns=COLUMNS).to_csv(index=False) + "".join(self._lines))


def exact_floats() -> dict:
    """read_csv's arguments that give every digit back: pandas 3 does by default (and deprecates the argument);
    pandas 2 parses floats faster and inexactly unless asked for round_trip."""
    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


# A results file's endings. Committed receipts keep their rows compressed: results.json.xz (xz halves what gzip
# leaves of the raw samples), older ones .gz; a run writes them plain.
COMPRESSIONS = {".gz": gzip.decompress, ".xz": lzma.decompress}
RESULT_SUFFIXES = tuple(kind + comp for kind in (".json", ".csv") for comp in ("", *COMPRESSIONS))
RESULT_FILES = tuple(f"results{suffix}" for suffix in RESULT_SUFFIXES)  # a folder's, first found


def load_result_file(path: str | os.PathLike) -> tuple[dict[str, Any], pd.DataFrame]:
    """(receipt, rows) from a run folder, a results.json or a results.csv (committed baselines), checked
    (store/validation.py): a file that is not gemmcompare results raises InputError naming it. Either file
    may be compressed (results.json.xz / .gz, results.csv.xz / .gz: how committed receipts are kept)."""
    p = Path(path)
    if p.is_dir():
        p = next((p / name for name in RESULT_FILES if (p / name).exists()), p / "results.csv")
    decompress = COMPRESSIONS.get(p.suffix)
    kind = Path(p.stem).suffix if decompress else p.suffix
    if kind == ".json":
        data = json.loads(decompress(p.read_bytes()) if decompress else p.read_text())
        if not isinstance(data, dict):
            raise InputError(f"{p}: not gemmcompare results: a {type(data).__name__}, not a mapping with "
                             f"'receipt' and 'results'")
        if "results" not in data:  # e.g. a receipt.json: read as no rows, it would pass for an empty run
            raise InputError(f"{p}: not gemmcompare results: no 'results' list (keys: "
                             f"{', '.join(sorted(map(str, data))[:8]) or 'none'}); pass a run folder, its results.json or "
                             f"its results.csv")
        receipt = check_receipt(data.get("receipt"), str(p))
        records = check_records(data.get("results", []), str(p))
        return receipt, check_rows(pd.DataFrame(records), str(p)) if records else pd.DataFrame(records)
    if kind == ".csv":
        df = pd.read_csv(p, **exact_floats())  # (pandas reads .csv.gz and .csv.xz as they are)
        for col in JSON_COLUMNS:
            if col in df:
                df[col] = df[col].map(lambda v: json.loads(v) if isinstance(v, str) else v)
        receipt_path = p.parent / "receipt.json"
        receipt = json.loads(receipt_path.read_text()) if receipt_path.exists() else {}
        return check_receipt(receipt, str(receipt_path)), check_rows(df, str(p))
    raise FileNotFoundError(f"{path}: not a run folder, results.json or results.csv (either may be compressed: .gz, .xz)")


def rows_from(iterable: Iterable[Result]) -> pd.DataFrame:
    return pd.DataFrame([r.to_record() for r in iterable])
