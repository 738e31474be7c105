"""The environment half of every receipt: device, driver, toolchain, library versions and source state."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from . import __version__
from .device import DeviceInfo


def git_state(path: Path | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the checkout gemmcompare runs from (falls back to the cwd's).

    GEMMCOMPARE_GIT_COMMIT (and GEMMCOMPARE_GIT_DIRTY), when set, win: whoever shipped a copy of the
    tree to a GPU machine knows its commit, and the copy may carry a .git of some other commit (the
    lent device's copy holds the last landed commit's .git with this tree laid over it)."""
    commit = os.environ.get("GEMMCOMPARE_GIT_COMMIT")
    if commit:
        dirty = os.environ.get("GEMMCOMPARE_GIT_DIRTY")
        return {"git_commit": commit, "git_dirty": None if dirty is None else dirty.lower() in ("1", "true", "yes"),
                "git_root": "from GEMMCOMPARE_GIT_COMMIT"}
    for where in (Path(__file__).resolve().parents[1], path or Path.cwd()):
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10)
            if out.returncode != 0:
                continue
            status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                                    capture_output=True, text=True, timeout=10)
            return {"git_commit": out.stdout.strip(), "git_dirty": bool(status.stdout.strip()), "git_root": str(where)}
        except (OSError, subprocess.SubprocessError):
            continue
    return {"git_commit": None, "git_dirty": None, "git_root": None}


def environment(device: DeviceInfo | None, driver: str | None = None) -> dict[str, Any]:
    from .build import toolchain

    torch_versions = toolchain.torch_versions()  # torch's own strings, read without importing it

    try:
        nvcc = toolchain.nvcc_version()
    except Exception:  # noqa: BLE001 - no toolkit: recorded as such
        nvcc = None
    rec: dict[str, Any] = {
        "gpu": device.name if device else None,
        "compute_capability": f"{device.cc[0]}.{device.cc[1]}" if device else None,
        "sm_count": device.sm_count if device else None,
        "l2_bytes": device.l2_bytes if device else None,
        "memory_bytes": device.total_memory_bytes if device else None,
        "driver": driver,
        "cuda_runtime": torch_versions["cuda"],
        "nvcc": nvcc,
        "torch": torch_versions["torch"],
        "cutlass": toolchain.cutlass_version(),
        "gemmcompare": __version__,
        "python": platform.python_version(),
        "host": platform.node(),
        "platform": platform.platform(),
    }
    rec.update(git_state())
    return rec


# -- reading receipts (of any version: keys moved over time) ------------------------------------------

def receipt_value(receipt: dict | None, *paths: str) -> Any:
    """The first present value among dotted key paths ('gpu.name', 'device.name', 'gpu')."""
    for path in paths:
        node: Any = receipt or {}
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node not in (None, "", {}):
            return node
    return None


def gpu_name(receipt: dict | None, default: str = "") -> str:
    """The GPU a receipt was measured on, whichever way the receipt spells it."""
    value = receipt_value(receipt, "gpu.name", "device.name", "gpu_name", "device_name", "gpu", "device")
    return str(value) if isinstance(value, (str, int, float)) else default


DEFAULT_COMPARE_THRESHOLD = 0.03  # the smallest relative change a comparison counts, unless the spec sets one


def compare_threshold(receipt: dict | None, given: float | None = None) -> float:
    """`given` (a --threshold the user passed) when set; else the threshold a candidate run's spec set
    (receipt key `compare_threshold`, or `report.threshold`), else DEFAULT_COMPARE_THRESHOLD."""
    if given:
        return given
    value = receipt_value(receipt, "compare_threshold", "report.threshold")
    try:
        value = float(value)
    except (TypeError, ValueError):
        return DEFAULT_COMPARE_THRESHOLD
    return value if 0 < value < 1 else DEFAULT_COMPARE_THRESHOLD
