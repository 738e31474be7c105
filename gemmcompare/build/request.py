"""What an implementation asks the builder for. Pure data: no compiler is touched here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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
