"""Report figures saved on a pool of processes: the same files as saved one by one, none missing when the
report is written, and a failure in a worker is the report's failure."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from gemmcompare.report import build_report, rendering
from gemmcompare.report.plots.common import save_figure
from gemmcompare.results import Status
from test_report_html import MMA, synthetic


@pytest.fixture
def pool():
    if not rendering.prestart(workers=2):
        pytest.skip("no forkserver on this platform")
    yield
    rendering.shutdown()


def test_a_report_saved_on_the_pool_is_the_report_saved_here(tmp_path, pool):
    run = synthetic({MMA.format(smem="swizzle", stages=4): Status.FAIL})
    parallel = build_report(run, tmp_path / "parallel")
    rendering.shutdown()
    serial = build_report(run, tmp_path / "serial")
    names = sorted(p.name for p in serial.out_dir.iterdir())
    assert names == sorted(p.name for p in parallel.out_dir.iterdir())
    assert sum(n.endswith(".png") for n in names) >= 4 and sum(n.endswith(".svg") for n in names) >= 4
    for name in names:  # byte for byte: the PNGs embedded in the HTML too
        assert (parallel.out_dir / name).read_bytes() == (serial.out_dir / name).read_bytes(), name


def _raise(fig, paths):
    raise RuntimeError("disk full")


def test_a_figure_that_fails_in_a_worker_fails_the_report(tmp_path, pool):
    fig = Figure()
    fig.add_subplot().plot([1, 2], [3, 4])
    with pytest.raises(RuntimeError, match="disk full"):
        with rendering.saving_in_parallel():
            assert rendering.submit(fig, [tmp_path / "x.png"], _raise)


def test_a_figure_that_does_not_pickle_is_saved_here(tmp_path, pool):
    from matplotlib.ticker import FuncFormatter

    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([1, 2], [3, 4])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))  # a lambda: no pickle
    with rendering.saving_in_parallel():
        paths = save_figure(fig, tmp_path, "lambda")
        assert all(p.exists() for p in paths)  # written before save_figure returned: in this process


def test_without_a_pool_figures_are_saved_at_once(tmp_path):
    rendering.shutdown()
    fig = Figure()
    fig.add_subplot().plot([1, 2], [3, 4])
    with rendering.saving_in_parallel():
        assert not rendering.submit(fig, [tmp_path / "x.png"], _raise)
