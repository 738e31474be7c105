"""Reports of runs: tables (Markdown, CSV, HTML), plots (PNG, SVG) and one self-contained HTML page.

    from gemmcompare.report import build_report
    report = build_report((receipt, rows), "runs/<run_id>/report")        # one run
    report = build_report([(r1, rows1), (r2, rows2)], "reports/h100_vs_h200")  # several runs, e.g. two GPUs

Modules: build (the report of one or several runs), data (tidy rows, names), tables, plots, html,
writers (the one CSV / Markdown / HTML table writer), kinds (the plot names, importable without matplotlib).
The names below load their module on first use, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib

_LAZY = {"build_report": "build", "Report": "build", "combine_runs": "build", "PLOT_KINDS": "plots",
         "Plot": "plots", "make_plots": "plots"}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
