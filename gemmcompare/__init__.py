"""gemmcompare: compare GEMM kernels honestly, under one precision, correctness and timing contract.

From Python (see gemmcompare.api):

    import gemmcompare
    df, receipt = gemmcompare.load("experiments/studies/quickstart/h200")
    df, receipt = gemmcompare.run("experiments/quickstart.yaml", shapes="4096x4096x4096")
    verdicts = gemmcompare.compare(base, cand)

The names load on first use (nothing heavy is imported by `import gemmcompare`).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

__all__ = ["load", "run", "compare", "__version__"]


def __getattr__(name: str):
    if name in ("load", "run", "compare"):  # the API's functions (gemmcompare.api), imported on first use
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
