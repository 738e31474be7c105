"""What is wrong with a spec: one issue per problem found, each naming the file, the key path and the line,
with the nearest valid name for a typo."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class SpecIssue:
    file: str
    path: tuple
    line: int | None
    message: str
    hint: str | None = None

    def __str__(self):
        where = f"{self.file}:{self.line}" if self.line else self.file
        key = _dotted(self.path) or "(top level)"
        text = f"{where}: {key}: {self.message}"
        return printable(text + (f" (did you mean {self.hint!r}?)" if self.hint else ""))


MAX_MESSAGE_CHARS = 400  # one issue's line: a spec value quoted in it may be long


def printable(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """One line of text safe to print to a terminal: control characters escaped, cut to `limit` characters."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _dotted(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def nearest(name: str, candidates) -> str | None:
    matches = difflib.get_close_matches(name, [str(c) for c in candidates], n=1, cutoff=0.6)
    return matches[0] if matches else None
