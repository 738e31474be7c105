"""A module that loads on first use, for modules that need a heavy library (torch) in their functions but
must stay cheap to import: reading a spec or answering `--help` loads no torch.

    from ..lazy import torch      # torch.rand(...) inside a function imports torch then
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module `name`; the first attribute read imports it (later reads go to the module)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


torch = LazyModule("torch")
