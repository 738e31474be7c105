"""Architecture arithmetic: compute capability <-> sm_XY names. Plain text, nothing probed: the build's
toolchain uses it, and gemmcompare.device uses the toolchain."""

from __future__ import annotations

import re

_ARCH = re.compile(r"(?:sm_)?([1-9][0-9]{1,2})(a?)")  # matched whole: the value reaches nvcc's flags


def parse_arch(text: str) -> tuple[int, bool]:
    """'sm_90a' -> (90, True); 'sm_80' -> (80, False); '90' -> (90, False). Raises ValueError."""
    m = _ARCH.fullmatch(text.lower()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"bad architecture {text!r}: expected sm_XY or sm_XYa, like sm_80, sm_90a or 90")
    return int(m.group(1)), m.group(2) == "a"


def arch_name(cc: int, specific: bool = False) -> str:
    return f"sm_{cc}{'a' if specific else ''}"
