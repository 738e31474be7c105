"""How big an input may be. These bounds keep `validate` (and every command that reads a spec) within
about 1 GB of memory and 10 s on a two-core machine, whatever the spec says. Each is checked before the
work it bounds: bytes before parsing, nesting while composing, values while aliases are expanded, rows
counted arithmetically before any list is built. Hitting one is an error (exit 2) that names it.

They are far above what a real spec needs (the largest shipped spec is 2.6 KB, 6 levels deep, a few
hundred rows); raise one here if a real study needs more.
"""

from __future__ import annotations

MAX_SPEC_BYTES = 256 * 1024  # a spec file (PyYAML composes about 100 KB/s in pure Python)
MAX_NESTING = 32  # YAML nesting levels (PyYAML composes recursively: a deeper spec would overflow the stack)
MAX_VALUES = 100_000  # YAML values after alias expansion: a "billion laughs" of a few lines stops here
MAX_PROBLEMS = 10_000  # problems over every entry, sweeps counted before they are expanded
MAX_IMPLEMENTATIONS = 1_000  # implementations over every entry, parameter sweeps counted before expanding
MAX_ROWS = 100_000  # problems x contracts x implementations: the plan of one run
MAX_ISSUES = 100  # spec problems listed in one error (the rest are counted)
MAX_GROUPS = 1024  # groups of one grouped problem (MoE layers have 8-384 experts; DeepSeek-V3 256)
MAX_ROUTING_DRAWS = 2**27  # token x expert values over every routing draw of a spec (~3 s of numpy on two cores)
MAX_SOURCE_BYTES = 16 * 2**20  # a custom kernel's source, read to find its entry point


def exceeded(what: str, limit: int, name: str) -> str:
    """The message for a limit hit: `what` says what and how much; then the limit and where it is set."""
    return f"{what}, over the limit of {limit:,} ({name} in gemmcompare/limits.py)"
