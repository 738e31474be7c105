"""Lines a library writes straight to the process's standard error (C's `stderr`, file descriptor 2: no Python
logger or warning filter sees them) that say nothing the user must act on, kept out of a run's output.

`without_known_noise()` is put around the one call known to write such a line. Inside it, fd 2 is a pipe
into a small filter process that passes every line on to the real standard error as it comes, but those that
match KNOWN_NOISE (each whole line, exactly). Everything else gets through: another thread's output in the
meantime (fd 2 is the whole process's), a library's real errors, a partial line such as a progress bar's
(held only while it could still become a noise line). The filter is a process, not a thread, so that a
process that dies inside the block (an abort, a segfault) still gets the lines it wrote before out: the filter
reads to the end of the pipe whatever becomes of its writer.

Where the filter cannot be started (no interpreter to run it, no fd 2), the block runs unfiltered.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Noise:
    head: str  # the line's fixed beginning (a partial line is held back only while it could still be this)
    pattern: str  # a regular expression the whole line (without its end of line) must match
    why: str  # why it is harmless: what the library meant, and why the user need not act


KNOWN_NOISE = (
    Noise("ERROR: External init callback must run in same thread as registerClient",
          r"ERROR: External init callback must run in same thread as registerClient \(-?\d+ != -?\d+\)",
          # libkineto (torch.profiler's C++ side, CUPTI's user) prints it with fprintf(stderr), not through its
          # logger, so neither KINETO_LOG_LEVEL nor TORCH_CPP_LOG_LEVEL silences it (kineto's
          # libkineto_api.cpp, LibkinetoApi::initClientIfRegistered). It comes when the profiler is first set
          # up (libkineto_init, inside the first profiler start of a process) on a thread other than the one
          # that loaded libtorch (which registered torch's client as the library loaded). libkineto then skips
          # that client's init() callback, which in torch does nothing (torch/csrc/profiler/
          # kineto_client_interface.cpp: `void init() override {}`): nothing is lost. A measuring worker
          # starts CUPTI on a warm-up thread (timing_methods.warm_up_in_background), a Dask worker on a task
          # thread: both met it on every run. Seen on the H200 (torch 2.11.0+cu130): a first start on a thread
          # printed it with KINETO_LOG_LEVEL=5 and with TORCH_CPP_LOG_LEVEL=3 too; one on the main thread did not.
          "libkineto skipped torch's client init() (an empty callback) because the profiler was first set "
          "up on another thread than the one that loaded torch"),
)

# The filter process's program (run as `python -I -S -c FILTER HEAD PATTERN [HEAD PATTERN ...]`): standard
# input to standard output, line by line, without the noise lines.
FILTER = r'''
import os, re, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
rules = [(sys.argv[i].encode(), re.compile(sys.argv[i + 1].encode())) for i in range(1, len(sys.argv) - 1, 2)]

def noise(line):
    body = line.rstrip(b"\r\n")
    return any(body.startswith(head) and rx.fullmatch(body) for head, rx in rules)

def put(data):
    while data:
        data = data[os.write(1, data):]

held = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    parts = re.split(rb"(?<=\n)|(?<=\r)(?!\n)", held + chunk)  # lines, and a progress bar's \r-ended ones
    held = parts.pop()
    out = b"".join(p for p in parts if not noise(p))
    if held and not any(head.startswith(held) or held.startswith(head) for head, _ in rules):
        out, held = out + held, b""
    if out:
        put(out)
if held and not noise(held):
    put(held)
'''

_lock = threading.Lock()
_active = False  # fd 2 is one per process: one filter at a time (a nested block runs as it is)
_serving: list[subprocess.Popen] = []  # filters still serving a child process's copy of the pipe


def filter_command(noise: tuple[Noise, ...] = KNOWN_NOISE) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", FILTER, *(s for n in noise for s in (n.head, n.pattern))]


@contextlib.contextmanager
def without_known_noise(noise: tuple[Noise, ...] = KNOWN_NOISE, wait_s: float = 1.0):
    """Run the block with fd 2 through the filter (see the module's doc). On leaving, fd 2 is the real standard
    error again and the filter has passed on everything written inside: it is waited for, up to `wait_s` (it
    ends within milliseconds, unless a process started inside the block, e.g. a compiler's worker pool, holds
    its copy of the pipe: the filter then serves that process for as long as it lives, and is not waited for)."""
    global _active
    with _lock:
        nested, _active = _active, True
    if nested:
        yield
        return
    saved = proc = None
    try:
        try:
            with contextlib.suppress(Exception):  # text Python holds goes out before fd 2 changes
                sys.stderr.flush()
            saved = os.dup(2)
            if not sys.executable:
                raise OSError("no interpreter to run the filter")
            proc = subprocess.Popen(filter_command(noise), stdin=subprocess.PIPE, stdout=saved, stderr=saved,
                                    start_new_session=True)  # a Ctrl-C at the terminal is not its to end
            os.dup2(proc.stdin.fileno(), 2)
            proc.stdin.close()  # fd 2 now holds the pipe's only write end here: restoring fd 2 ends the filter
        except (OSError, ValueError, subprocess.SubprocessError):  # no fd 2, no interpreter: run unfiltered
            if saved is not None:
                os.dup2(saved, 2)
            if proc is not None:
                proc.kill()
                proc.wait()
                proc = None
        yield
    finally:
        if proc is not None:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            try:
                proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                _serving.append(proc)
        if saved is not None:
            os.close(saved)
        with _lock:
            _active = False

