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


def import_in_background():
    """Import what writing a report needs (pandas, matplotlib, the plot modules: about a second) and start
    the pool that saves its figures (rendering.py) in a daemon thread, while the run's parent only waits on
    its workers; the report after the run then starts at once. Returns the thread."""
    import threading

    def load() -> None:
        try:
            importlib.import_module(f"{__name__}.build")
            from PIL import Image  # noqa: F401  (the PNG writer's palette step)

            from .rendering import prestart

            prestart()  # the processes that save the figures, ready when the report starts
        except Exception:  # noqa: BLE001 - the report itself will meet and report any failure
            pass

    thread = threading.Thread(target=load, name="gemmcompare report imports", daemon=True)
    thread.start()
    return thread


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
