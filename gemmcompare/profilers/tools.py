"""Finding NVIDIA's command-line tools (compute-sanitizer, ncu): on PATH, in the CUDA toolkit, or in
Nsight Compute's own install folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import ToolchainError


def find_tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    from ..build.toolchain import cuda_home

    for cand in (cuda_home() / "bin" / name, *Path("/opt/nvidia").glob(f"nsight-compute/*/{name}")):
        if Path(cand).exists():
            return str(cand)
    raise ToolchainError(f"{name} not found on PATH or in the CUDA toolkit")
