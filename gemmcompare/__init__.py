"""gemmcompare: compare GEMM kernels honestly, under one precision, correctness and timing contract.

From Python (see gemmcompare.api):

    import gemmcompare
    df, receipt = gemmcompare.load("experiments/studies/quickstart/h200")
    df, receipt = gemmcompare.run("experiments/quickstart.yaml", shapes="4096x4096x4096")
    verdicts = gemmcompare.compare(base, cand)
    gemmcompare.table(df)                      # the report's table of these rows
    gemmcompare.plot(df, "percent_of_baseline")  # the report's figures of one kind, shown inline in a notebook

The names load on first use (nothing heavy is imported by `import gemmcompare`).
"""

from __future__ import annotations

import importlib

from .errors import GemmCompareError, InputError, NoDeviceError, SpecError

__version__ = "0.1.0"

# The errors the API raises, to catch by name: SpecError (a spec is invalid; .problems lists each), InputError (a
# file, folder or argument), SourceError (a run that cannot be found), NoDeviceError (no CUDA device), and their
# base GemmCompareError.
__all__ = ["load", "run", "compare", "table", "plot", "__version__", "GemmCompareError", "SpecError", "InputError", "NoDeviceError",
           "SourceError"]


def __getattr__(name: str):
    if name in ("load", "run", "compare"):  # the API's functions (gemmcompare.api), imported on first use
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    if name in ("table", "plot"):  # the report's tables and figures for a notebook (gemmcompare.notebook)
        return getattr(importlib.import_module(f"{__name__}.notebook"), name)
    if name == "SourceError":  # lives with the store's sources, which are not imported until used
        return importlib.import_module(f"{__name__}.store.sources").SourceError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
