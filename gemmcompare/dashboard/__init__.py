"""`gemmcompare dashboard`: a static site of every run found under some folders and stores, for tracking
regressions over commits and dates.

  runs.py     finding runs (run folders at any depth, results files, stores) and what their receipts say
  steps.py    steps between consecutive runs of an implementation, by compare's verdict
  series.py   one (GPU, contract, problem): every implementation over the runs, CIs, clocks, THROTTLED
  plots.py    the series figure, GPUs side by side
  site.py     the pages (index, per spec, per series, across GPUs) and build_dashboard

    from gemmcompare.dashboard import build_dashboard
    build_dashboard(["experiments/studies"], "site")
"""

from .site import Dashboard, build_dashboard  # noqa: F401
