"""The CUDA device a run measures on, and architecture arithmetic (compute capability <-> sm_XY)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    cc: tuple[int, int]  # compute capability (major, minor)
    sm_count: int
    l2_bytes: int
    total_memory_bytes: int
    index: int = 0

    @property
    def cc_int(self) -> int:
        return self.cc[0] * 10 + self.cc[1]

    @property
    def arch(self) -> str:
        return f"sm_{self.cc_int}"


def probe_device(index: int = 0) -> DeviceInfo | None:
    """The CUDA device at `index`, or None when torch sees no CUDA device."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(index)
    return DeviceInfo(
        name=props.name,
        cc=(props.major, props.minor),
        sm_count=props.multi_processor_count,
        l2_bytes=int(getattr(props, "L2_cache_size", 0)),
        total_memory_bytes=int(props.total_memory),
        index=index,
    )


_ARCH = re.compile(r"(?:sm_)?([1-9][0-9]{1,2})(a?)")  # matched whole: the value reaches nvcc's flags


def parse_arch(text: str) -> tuple[int, bool]:
    """'sm_90a' -> (90, True); 'sm_80' -> (80, False); '90' -> (90, False). Raises ValueError."""
    m = _ARCH.fullmatch(text.lower()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"bad architecture {text!r}: expected sm_XY or sm_XYa, like sm_80, sm_90a or 90")
    return int(m.group(1)), m.group(2) == "a"


def arch_name(cc: int, specific: bool = False) -> str:
    return f"sm_{cc}{'a' if specific else ''}"
