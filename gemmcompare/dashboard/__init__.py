"""`gemmcompare dashboard`: a static site of every run found under some folders and stores, for tracking
regressions over commits and dates.

  runs.py      finding runs (run folders at any depth, results files, stores) and what their receipts say
  purpose.py   which runs of a spec are one series (GPU, spec, purpose): a probe or a narrowed run is not
  steps.py     steps between consecutive runs of an implementation, by compare's verdict
  series.py    one (GPU, contract, problem): every implementation over the runs, CIs, clocks, THROTTLED
  plots.py     the series figure, GPUs side by side
  pages.py     the HTML pages (index, per group of runs, per series, across GPUs)
  jobs.py      one page's inputs and its drawing, for a worker process
  manifest.py  what each page was drawn from (hashes of its rows, options and code), kept in the output folder
  site.py      build_dashboard: the pages, those whose inputs changed drawn on a pool, the rest kept

    from gemmcompare.dashboard import build_dashboard
    build_dashboard(["experiments/studies"], "site")
"""

from .site import Dashboard, build_dashboard  # noqa: F401
