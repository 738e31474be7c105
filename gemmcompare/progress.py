"""What a long command says while it works, on stderr: a first line saying what it is about to do (printed
before any heavy import or work, so that a cold start is never silent), then a line for each step as it ends.
A loop over many items (kernels compiled, plots drawn, figures saved, cells profiled) is a tqdm bar when
stderr is a terminal, and a line per item as it finishes otherwise (a log file, a CI job, or --no-progress),
so that a log cut off by a time limit still says how far the command got.

    progress = Progress.for_command(bars=not args.no_progress)
    progress.say(f"report {run}: loading it, then its tables, plots and pages")
    with progress.step("loading the run") as step:
        src = load_source(...)
        step.done = f"loaded {len(src.rows)} rows"     # the line printed when the block ends
    with progress.items(len(kinds), "plots", unit="kind") as items:
        for kind in kinds:
            ...
            items.done(f"drew {kind}", seconds)         # a bar's tick, or a line

A step whose block raises prints nothing: its line would claim it finished. Results stay on stdout. Library
functions take a `progress` argument that defaults to SILENT, so the Python API and `run`'s own report are
as quiet as before. No gemmcompare import here: any module may take a Progress.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator, TextIO


def bar(total: int | None, desc: str, unit: str, *, enabled: bool = True, stream: TextIO | None = None):
    """A tqdm bar on `stream` (stderr), shaped as every gemmcompare bar is; `enabled=False` gives a bar that
    draws nothing (tqdm's disable), so that callers tick it unconditionally."""
    from tqdm import tqdm  # on first use: the commands that never draw a bar do not import it

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, file=stream or sys.stderr,
                dynamic_ncols=True)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream: not a terminal
        return False


class Step:
    """One step under way; `done` is the line its end prints (default: the step's name)."""

    def __init__(self, doing: str):
        self.doing = doing
        self.done: str | None = None


class Items:
    """The items of one loop: a bar's tick each on a terminal, else a line each ([i/N] text (s)); `total`
    None where the count is not known ahead (the line then has no counter). One bar at a time: a loop inside
    a loop that draws a bar draws none (the step's line still says how it ended)."""

    def __init__(self, progress: "Progress", total: int | None, desc: str, unit: str):
        self.progress, self.total, self.count = progress, total, 0
        self._bar = None
        self._quiet = progress.bars and progress._bar is not None
        if progress.bars and not progress.silent and total != 0 and not self._quiet:
            self._bar = bar(total, desc, unit, stream=progress.stream)
            progress._bar = self._bar

    def done(self, text: str, seconds: float | None = None) -> None:
        """One item finished: `text` says what it was and how it went; `seconds`, where known, its own time."""
        self.count += 1
        if self._bar is not None:
            self._bar.set_postfix_str(text[:40])
            self._bar.update(1)
            return
        if self._quiet or self.progress.bars:
            return
        counter = f"[{self.count}/{self.total}] " if self.total else ""
        took = f" ({seconds:.1f} s)" if seconds is not None else ""
        self.progress.say(f"  {counter}{text}{took}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self.progress._bar = None
            self._bar = None


class Progress:
    """Where a command's progress goes (see the module docstring). `bars`: loops draw tqdm bars instead of a
    line per item; `silent`: nothing at all (SILENT, for callers that are not a command)."""

    def __init__(self, *, bars: bool = False, stream: TextIO | None = None, silent: bool = False):
        self.bars, self.silent = bars, silent
        self._stream = stream
        self._bar = None  # the bar now drawn, which a line must be written above

    @classmethod
    def for_command(cls, bars: bool = True, stream: TextIO | None = None) -> "Progress":
        """A command's progress: bars where allowed (no --no-progress) and stderr is a terminal."""
        return cls(bars=bars and is_terminal(stream or sys.stderr), stream=stream)

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr  # looked up when written: a test's capture, a redirected stderr

    def say(self, text: str) -> None:
        """A line now, flushed (a log shows it at once), above the bar if one is drawn."""
        if self.silent:
            return
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    @contextmanager
    def step(self, doing: str) -> Iterator[Step]:
        """A step: its line, with its seconds, when the block ends without an exception."""
        step = Step(doing)
        t0 = time.monotonic()
        yield step
        self.say(f"  {step.done or doing} ({time.monotonic() - t0:.1f} s)")

    @contextmanager
    def items(self, total: int | None, desc: str, unit: str = "item") -> Iterator[Items]:
        items = Items(self, total, desc, unit)
        try:
            yield items
        finally:
            items.close()


SILENT = Progress(silent=True)
