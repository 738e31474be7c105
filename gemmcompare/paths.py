"""Where the package's data lives: kernel sources, the C ABI header, CUTLASS configurations and their
templates, and the starters `gemmcompare new-kernel` copies. Every other module asks this one.

A regular install (`pip install .`) carries the data as package data under gemmcompare/_data/ (see
setup.py). A checkout, or an editable install of one, has no _data/: the folders sit beside the package.
That is the one fallback; nothing else guesses paths.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_INSTALLED = PACKAGE_DIR / "_data"
_CHECKOUT = PACKAGE_DIR.parent


def data_dir(name: str) -> Path:
    """The folder `name` (extensions, cutlass_configs) of this installation."""
    installed = _INSTALLED / name
    return installed if installed.is_dir() else _CHECKOUT / name


EXTENSIONS_DIR = data_dir("extensions")  # hand-written kernels, library bindings, starters
ABI_INCLUDE_DIR = EXTENSIONS_DIR / "include"  # holds gemmcompare/gemm_abi.h
ABI_HEADER = ABI_INCLUDE_DIR / "gemmcompare" / "gemm_abi.h"
STARTERS_DIR = EXTENSIONS_DIR / "starters"  # what `gemmcompare new-kernel` copies
CUTLASS_CONFIGS_DIR = data_dir("cutlass_configs")  # configurations as YAML, one file per template family
CUTLASS_TEMPLATES_DIR = CUTLASS_CONFIGS_DIR / "templates"


def missing_data() -> list[str]:
    """The data folders this installation lacks (an empty list when it is whole)."""
    wanted = (ABI_HEADER, STARTERS_DIR, CUTLASS_TEMPLATES_DIR)
    return [str(p) for p in wanted if not p.exists()]
