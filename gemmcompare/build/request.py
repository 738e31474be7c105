"""What an implementation asks the builder for. Pure data: no compiler is touched here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import ABI_INCLUDE_DIR

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


@dataclass(frozen=True)
class KernelSource:
    """One translation unit. Either a file on disk (compiled as is) or rendered text.

    `filename` names the TU inside the build folder; it must be unique within a build group and end in
    .cu (nvcc) or .cpp (host compiler; the only place torch or cuBLAS headers may be included).
    """

    filename: str
    path: Path | None = None
    text: str | None = None

    def __post_init__(self):
        if (self.path is None) == (self.text is None):
            raise ValueError(f"KernelSource {self.filename}: give exactly one of path and text")
        if not self.filename.endswith((".cu", ".cpp")):
            raise ValueError(f"KernelSource {self.filename}: must end in .cu or .cpp")

    def read(self) -> str:
        return self.text if self.text is not None else Path(self.path).read_text()


@dataclass(frozen=True)
class BuildRequest:
    """One implementation's entry point and the sources that define it.

    Requests with the same (group, arch, cuda_flags, include_dirs, uses_cutlass) are merged into one
    extension: one generated binding, each source one TU, compiled in parallel by ninja.
    """

    group: str  # e.g. "lab", "mma_sync", "cutlass_sm90_<name>"
    sources: tuple[KernelSource, ...]
    entry: str  # the extern "C" symbol, see extensions/include/gemmcompare/gemm_abi.h
    arch: str  # "sm_80", "sm_89", "sm_90", "sm_90a", ...
    has_workspace: bool = False  # the entry has a NAME_workspace_bytes companion
    cuda_flags: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    uses_cutlass: bool = False
    link_flags: tuple[str, ...] = field(default=())

    @property
    def merge_key(self) -> tuple:
        return (self.group, self.arch, self.cuda_flags, self.include_dirs, self.uses_cutlass, self.link_flags)


def local_headers(sources, include_dirs) -> list[Path]:
    """The local headers the sources include, followed recursively through `#include "..."` (resolved against
    the including file's folder, the ABI include folder and the include dirs). Angle-bracket includes (CUDA,
    CUTLASS) are covered by the nvcc and CUTLASS versions."""
    search = [ABI_INCLUDE_DIR, *map(Path, include_dirs)]
    found: set[Path] = set()
    todo = [(s.read(), Path(s.path).resolve().parent if s.path is not None else None) for s in sources]
    while todo:
        text, here = todo.pop()
        for name in _INCLUDE.findall(text):
            for base in ([here] if here else []) + search:
                cand = (base / name).resolve()
                if cand.is_file():
                    if cand not in found:
                        found.add(cand)
                        todo.append((cand.read_text(errors="replace"), cand.parent))
                    break
    return sorted(found)
