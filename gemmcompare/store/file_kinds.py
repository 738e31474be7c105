"""What a file given where a run was expected is, when it is not one: a receipt, a spec, a report or one of its
tables, a figure, an archive, an empty file, text or bytes of no known kind; each told with what to pass instead.

The sources module asks here before it reads a file as results, so that a file that is not results is an error
that says what it is (exit 2), never an empty run, a traceback, or a report's table read back as rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .run_folder import RESULT_FILES, RESULT_SUFFIXES

if TYPE_CHECKING:
    from .sources import Terms

# What a run is, said once at the end of the messages that have nothing more particular to suggest.
PASS_A_RUN = ("pass a run: its folder (holding results.json or results.csv), that results file (maybe .gz or .xz), "
              "a store (.db) or a run id in one")
# Tables that gemmcompare's commands write beside their pages; readable as CSV, but not runs.
WRITTEN_TABLES = {"summary": "report", "across": "report", "predictions": "report", "compare": "compare",
                  "history": "history"}
MAGIC = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
         (b"%PDF", "a PDF document"), (b"\x1f\x8b", "a gzip archive"), (b"\xfd7zXZ\x00", "an xz archive"),
         (b"PK\x03\x04", "a zip archive"), (b"BZh", "a bzip2 archive"), (b"\x7fELF", "a program (ELF)"))
HEAD_BYTES = 4096
MAX_YAML_BYTES = 1 << 20  # a spec is far smaller; a larger YAML file is not read to tell


def has_results(folder: Path) -> bool:
    """Whether `folder` is a run folder (it holds a results file)."""
    return any((folder / name).is_file() for name in RESULT_FILES)


def not_results(path: Path, terms: Terms) -> str | None:
    """Why the file `path` (not a store) is not a run, and what to pass instead; None when its name says
    results (results.json, run.csv.xz, ...) and nothing says otherwise: then reading it tells."""
    name = path.name.lower()
    stem = name.split(".")[0]
    if stem == "receipt":  # read as results, a receipt gave an empty run: 0 rows, exit 0
        return (f"{path} is a run's receipt (the environment it ran in), not its rows: "
                + (f"pass the run folder {path.parent} instead" if has_results(path.parent) else
                   f"its folder {path.parent} holds no results.json or results.csv either"))
    table = _written_table(path, stem)
    if table:
        return table
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if head and name.endswith(RESULT_SUFFIXES):
        return None
    what = _kind(path, name, head)
    return f"{path} is {what}, not a run: {_instead(path, what, terms)}"


def _written_table(path: Path, stem: str) -> str | None:
    """A table a command wrote beside its page (a report's summary.csv, compare.csv): CSV that reads like rows,
    but of a report, not of a run."""
    if not path.name.lower().endswith(RESULT_SUFFIXES) or stem == "results":
        return None
    folder = path.parent
    page = next((folder / f"{p}.{ext}" for p in ("report", stem) for ext in ("html", "md")
                 if (folder / f"{p}.{ext}").exists()), None)
    command = WRITTEN_TABLES.get(stem)
    if page is None and command is None:
        return None
    writer = f"gemmcompare {command}" if command else "a gemmcompare command"
    instead = "pass the runs it was drawn from" if command in ("compare", "history") else drawn_from(folder)
    return f"{path} is a table that {writer} wrote (beside {page.name if page else 'its page'}), not a run: {instead}"


def drawn_from(folder: Path) -> str:
    """What to pass for something drawn from a run: the run folder it sits in, when it does; else the run id its
    summary.csv names."""
    if folder.name == "report" and has_results(folder.parent):
        return f"pass the run folder it was drawn from, {folder.parent}"
    run_id = _summary_run_id(folder / "summary.csv")
    return "pass the run it was drawn from" + (f" (run {run_id}: its folder, or its id in the store)" if run_id else "")


def _summary_run_id(summary: Path) -> str:
    """The run id in the first row of a report's summary.csv, or ''."""
    import csv

    try:
        with open(summary, newline="", errors="replace") as f:
            row = next(csv.DictReader(f), None)
    except (OSError, csv.Error):
        return ""
    return str((row or {}).get("run_id") or "")[:80]


def _kind(path: Path, name: str, head: bytes) -> str:
    if not head:
        return "an empty file"
    for magic, what in MAGIC:
        if head.startswith(magic):
            return what
    if len(head) > 262 and head[257:262] == b"ustar":
        return "a tar archive"
    if b"\x00" in head:
        return f"binary data of no known kind (it starts {head[:8].hex(' ')})"
    suffix = Path(name).suffix
    if suffix in (".db", ".sqlite", ".sqlite3"):
        return "a file named like a store that is not an SQLite database (it does not start as one)"
    if suffix == ".svg" or b"<svg" in head[:512]:
        return "an SVG image"
    if suffix in (".yaml", ".yml"):
        return "an experiment spec" if _is_spec(path) else "a YAML file that is not a spec"
    if suffix in (".html", ".htm", ".md") and (name.startswith("report.") or path.parent.name == "report"):
        return "a report"
    kinds = {".html": "an HTML page", ".htm": "an HTML page", ".md": "a Markdown file", ".py": "Python source",
             ".ipynb": "a notebook", ".cu": "CUDA source", ".cuh": "a CUDA header", ".txt": "a text file",
             ".log": "a log", ".sh": "a shell script"}
    return kinds.get(suffix, "text of no known kind")


def _is_spec(path: Path) -> bool:
    """Whether a YAML file reads as an experiment spec (a mapping with problems or implementations)."""
    try:
        if path.stat().st_size > MAX_YAML_BYTES:
            return False
        import yaml

        data = yaml.safe_load(path.read_text(errors="replace"))
    except Exception:  # noqa: BLE001 - any YAML or reading error: then it is not a spec we can name
        return False
    return isinstance(data, dict) and bool({"problems", "implementations"} & set(map(str, data)))


def _instead(path: Path, what: str, terms: Terms) -> str:
    if what == "an experiment spec":
        return f"run it first ({terms.run_spec(path)}), then pass the run it makes (its folder under runs/, its id, or latest)"
    if what == "a report":
        return drawn_from(path.parent)
    if what.endswith("image") or what == "a PDF document":
        return "figures are drawn from a run's rows; " + PASS_A_RUN
    if what.endswith("archive"):
        return "unpack it, then " + PASS_A_RUN + " (a results file may be compressed alone: results.json.xz, .gz)"
    return PASS_A_RUN
