"""Each report plot kind on synthetic rows and on committed H200 runs, read back from the figures themselves:
axes, labels, scales, error bars, legends (CPU only).

The plot modules save their figures through `save_figure`; the `figures` fixture records every figure saved,
so a test can look at what a reader would see."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer

from gemmcompare.report import build_report
from gemmcompare.report.bandwidth import memory_rates
from gemmcompare.report.build import combine_runs
from gemmcompare.report.plots import PLOT_KINDS
from gemmcompare.report.plots import common
from gemmcompare.report.plots.baseline import axis_top
from gemmcompare.report.plots.common import spaced_ticks
from gemmcompare.report.stats import median_ci, percent_ci, rate_ci
from gemmcompare.results import Status
from gemmcompare.store import load_result_file
from test_report import BASELINE, MMA, make_rows, receipt_for

STUDIES = Path(__file__).resolve().parents[1] / "experiments" / "studies"
# committed receipts these tests draw from
RECEIPTS = {"library-vs-handwritten": "library-vs-handwritten/h200", "cutlass-sm90-sweep": "cutlass-sm90/h200/sweep",
            "quickstart": "quickstart/h200", "mma-sync-sweep": "mma-sync/h200/sweep",
            "moe-shapes": "moe-shapes/h200/part-f0b7480/merged", "moe-fp8": "moe-shapes/h100/fp8-6ca041b/merged"}
PLOT_MODULES = ("throughput", "baseline", "roofline", "bandwidth", "errors", "heatmap", "distribution",
                "architectures")


@pytest.fixture
def figures(monkeypatch):
    """{file stem: Figure} of every figure the plot modules save during the test."""
    import importlib

    saved: dict[str, object] = {}
    original = common.save_figure

    def keep(fig, out_dir, stem, formats=("png", "svg")):
        saved[stem] = fig
        return original(fig, out_dir, stem, formats=("png",))  # PNG is enough to prove it renders

    for name in PLOT_MODULES:
        monkeypatch.setattr(importlib.import_module(f"gemmcompare.report.plots.{name}"), "save_figure", keep)
    return saved


def rows_of(run_id="r1", **kw) -> pd.DataFrame:
    rows = make_rows(run_id, **kw)
    return combine_runs((receipt_for(run_id), pd.DataFrame([r.to_record() for r in rows])))


def committed(name: str) -> pd.DataFrame:
    return combine_runs(load_result_file(STUDIES / RECEIPTS[name]))


def draw(kind: str, rows: pd.DataFrame, tmp_path: Path):
    return [p for p in PLOT_KINDS[kind](rows, tmp_path) if not p.skipped]


def rendered(fig):
    """Draw fig on an Agg canvas (the report's figures have none of their own) and return its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def turned_labels_too_close(fig, ax) -> list[str]:
    """The x tick labels turned by an angle whose neighbours' lines would overprint: labels turned by a sit
    (spacing of their anchors) * sin(a) apart across their lines, which must hold the label's height unturned
    (a turned label's box is axis-aligned, so box overlap says nothing about the text)."""
    renderer = rendered(fig)
    labels = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
    xs = [ax.transData.transform((t.get_position()[0], 0))[0] for t in labels]
    close = []
    for label, x0, x1 in zip(labels[1:], xs, xs[1:]):
        angle = label.get_rotation()
        label.set_rotation(0)
        height = label.get_window_extent(renderer).height
        label.set_rotation(angle)
        if (x1 - x0) * math.sin(math.radians(angle)) < height:
            close.append(label.get_text())
    return close


def overlapping_tick_labels(fig, ax, axis="x") -> list[tuple[str, str]]:
    """Pairs of visible tick labels of `axis` whose boxes overlap once drawn."""
    renderer = rendered(fig)
    labels = [t for t in getattr(ax, f"get_{axis}ticklabels")() if t.get_text() and t.get_visible()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def labels_under_the_row_below(fig) -> list[str]:
    """The x tick labels of a row of stacked axes that reach into the axes under it (drawn over by it)."""
    renderer = rendered(fig)
    rows = sorted(fig.axes, key=lambda a: -a.get_position().y0)
    return [t.get_text() for upper, lower in zip(rows, rows[1:]) for t in upper.get_xticklabels()
            if t.get_text() and t.get_window_extent(renderer).y0 < lower.get_window_extent(renderer).y1]


# -- statistics ------------------------------------------------------------------------------------------

def test_median_ci_is_distribution_free_and_needs_samples():
    rng = np.random.default_rng(1)
    samples = list(rng.lognormal(0, 0.05, 200))
    lo, hi = median_ci(samples)
    assert lo < np.median(samples) < hi and hi / lo < 1.03
    assert median_ci([1.0, 1.1, 1.2]) is None  # too few samples: no bar rather than an invented one
    assert median_ci("not samples") is None
    tlo, thi = rate_ci(2e12, samples)  # 2 TFLOP per launch, times in ms -> TFLOP/s
    assert math.isclose(tlo, 2e12 / (hi * 1e-3) / 1e12) and thi > tlo
    plo, phi = percent_ci(80.0, samples, samples)
    assert plo < 80.0 < phi
    assert percent_ci(80.0, samples, []) is None


# -- throughput ------------------------------------------------------------------------------------------------

def test_throughput_puts_unrelated_shapes_on_a_category_axis_with_error_bars(tmp_path, figures):
    rows = rows_of(problems=[(4096,) * 3, (3999, 5001, 4097), (8192,) * 3], sweep=False)
    (plot,) = draw("throughput_vs_size", rows, tmp_path)
    ax = figures["throughput_f16_f32acc_tn"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4096x4096x4096", "3999x5001x4097", "8192x8192x8192"]
    assert ax.get_xscale() == "linear" and "category" in ax.get_xlabel()
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2 and all(c.has_yerr for c in bars)  # cuBLAS and the CUTLASS row, each with its CI
    for c in bars:  # markers only: no line joins two different shapes
        assert c.lines[0].get_linestyle() in ("None", "none", "")
    assert "95% CI" in plot.caption and "no lines join" in plot.caption
    assert ax.get_ylim()[0] == 0 and ax.get_yscale() == "linear"


def test_grouped_problems_are_named_on_two_lines_that_do_not_overprint(tmp_path, figures):
    """The MoE study's 22 grouped problems: each label on two lines (the shape, then its routing), an axis name
    that says what a grouped label holds, and no two tick labels overlapping, on the throughput plot (one axes,
    labels turned upright when 30 degrees would not part them) and on the % of baseline bars (rows)."""
    rows = committed("moe-shapes")
    draw("throughput_vs_size", rows, tmp_path)
    draw("percent_of_baseline", rows, tmp_path)
    throughput = figures["throughput_bf16_bf16out_f32acc_tn"]
    percent = figures["pct_of_baseline_bf16_bf16out_f32acc_tn"]
    for fig in (throughput, percent):
        named = [a for a in fig.axes if a.get_xticklabels()]
        for ax in named:
            texts = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            assert texts and all(t.count("\n") == 1 and t.startswith("g") for t in texts), texts
            assert ax.get_xticklabels()[0].get_rotation() in (30, 90)
            assert not turned_labels_too_close(fig, ax)
        # the axis name, once under the bottom row
        assert "grouped problem: g groups, n N, k K; t tokens" in named[-1].get_xlabel()
    (ax,) = [a for a in throughput.axes if a.get_xticklabels()]
    assert ax.get_xticklabels()[0].get_rotation() == 90  # 22 problems of two lines: 30 degrees would overprint


def test_throughput_of_one_family_of_shapes_keeps_a_size_axis_and_goes_log_for_small_problems(tmp_path, figures):
    rows = rows_of(problems=[(64, 64, k) for k in (32, 256, 2048, 16384)], sweep=False)
    # make the small-K rows slow enough that rates span far more than 20x
    rows.loc[rows["k"] == 32, "tflops"] = rows.loc[rows["k"] == 32, "tflops"] / 100
    draw("throughput_vs_size", rows, tmp_path)
    ax = figures["throughput_f16_f32acc_tn"].axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlabel().startswith("K (M=64, N=64)")
    assert ax.get_yscale() == "log" and "log scale" in ax.get_ylabel()
    joined = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert any(line.get_linestyle() == "-" for line in joined)  # one family of shapes: lines are honest


# -- % of baseline -------------------------------------------------------------------------------------------

def test_percent_bars_carry_their_values_and_ci(tmp_path, figures):
    rows = rows_of(problems=[(1024,) * 3, (4096,) * 3], sweep=False)
    draw("percent_of_baseline", rows, tmp_path)
    ax = figures["pct_of_baseline_f16_f32acc_tn"].axes[0]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    heights = [b.get_height() for c in bars for b in c]
    texts = {t.get_text() for t in ax.texts}
    assert heights and all(f"{h:.0f}" in texts for h in heights)  # every bar says its value
    assert sum(isinstance(c, ErrorbarContainer) for c in ax.containers) == len(heights)
    assert ax.get_ylim()[0] == 0 and "% of baseline" in ax.get_ylabel()


def test_percent_bars_cut_a_few_outliers_and_label_them():
    top, cut = axis_top([53, 54, 59, 62, 99, 99, 32, 64, 63, 214, 250, 527, 60, 59, 97])
    assert cut is not None and cut < top < 214 and top >= 114
    assert axis_top([90, 95, 300, 310, 320])[1] is None  # not a few: every bar fits


def test_percent_bars_cut_an_outlier_and_say_its_value(tmp_path, figures):
    """Three square problems and an odd one where the CUTLASS row reads 527% (aligned copies against cuBLAS off
    its fast path, as a library-vs-handwritten run on the H200 once showed): that bar is cut at the top, hatched
    and labelled with its value, and the axis is scaled to the other bars."""
    cutlass = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"
    rows = make_rows("r1", problems=[(1024,) * 3, (2048,) * 3, (4096,) * 3]) + \
        make_rows("r1", problems=[(3999, 5001, 4097)], slowdown={cutlass: 0.92 / 5.27}, seed=1)
    frame = combine_runs((receipt_for("r1"), pd.DataFrame([r.to_record() for r in rows])))
    (plot,) = draw("percent_of_baseline", frame, tmp_path)
    ax = figures["pct_of_baseline_f16_f32acc_tn"].axes[0]
    odd = frame[(frame["implementation"] == cutlass) & (frame["m"] == 3999)]["pct_of_baseline"].iloc[0]
    assert f"{odd:.0f}" in [t.get_text() for t in ax.texts] and 500 < odd < 560  # noisy samples: about 527
    hatched = [b for c in ax.containers if isinstance(c, BarContainer) for b in c if b.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_height() < ax.get_ylim()[1]
    assert ax.get_ylim()[1] < 200 and "hatched" in plot.caption
    assert not any("…" in t.get_text() for t in ax.get_legend().get_texts())


def test_many_implementations_get_one_panel_per_problem_named_on_the_axis(tmp_path, figures):
    (plot,) = draw("percent_of_baseline", committed("cutlass-sm90-sweep")[lambda d: d["contract"] == "f16_f32acc_tn"],
                   tmp_path)
    fig = figures["pct_of_baseline_f16_f32acc_tn"]
    visible = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in visible] == ["611x613x617", "2048x2048x2048", "4096x4096x4096", "3999x5001x4097",
                                                "8192x8192x8192"]
    names = [t.get_text().replace("\n", " ") for t in visible[0].get_yticklabels()]
    assert len(names) == 14 and all("cluster" in n and "stauto" in n for n in names if n.startswith("cutlass3x"))
    assert "best at the top" in plot.caption


def test_a_row_without_a_bar_names_its_status_in_its_slot(tmp_path, figures):
    """hopper.best on K = 4097 is a SKIP: its slot in that problem's panel says so instead of being empty;
    the same in the grouped layout for a FAIL."""
    (plot,) = draw("percent_of_baseline", committed("library-vs-handwritten"), tmp_path)
    fig = figures["pct_of_baseline_f16_f32acc_tn"]
    odd = next(a for a in fig.axes if a.get_title() == "3999x5001x4097")
    assert "SKIP" in [t.get_text() for t in odd.texts] and "status" in plot.caption
    rows = rows_of(problems=[(1024,) * 3, (4096,) * 3], sweep=False)
    other = rows[~rows["is_baseline"]].assign(implementation="lab.wmma_staged", family="lab")
    rows = pd.concat([rows, other], ignore_index=True)
    failed = (rows["implementation"] == "lab.wmma_staged") & (rows["problem"] == "4096x4096x4096")
    rows.loc[failed, ["status", "pct_of_baseline"]] = ["FAIL", np.nan]
    draw("percent_of_baseline", rows, tmp_path)
    assert "FAIL" in [t.get_text() for t in figures["pct_of_baseline_f16_f32acc_tn"].axes[0].texts]


def test_wrapped_rows_leave_room_for_the_upright_labels_of_the_row_above(tmp_path, figures):
    """The FP8 MoE study's 48 grouped problems of 2 bars: two rows of 24, labels upright (two lines of up to 22
    characters). The gap between the rows is sized for them; at a fixed gap the lower row hid their start."""
    draw("percent_of_baseline", committed("moe-fp8"), tmp_path)
    fig = figures["pct_of_baseline_e4m3_bf16out_f32acc_tn_block"]
    named = [a for a in fig.axes if a.get_xticklabels()]
    assert len(named) == 2 and named[0].get_xticklabels()[0].get_rotation() == 90
    assert not labels_under_the_row_below(fig)


def test_percent_bars_of_many_problems_wrap_into_rows_of_readable_bars(tmp_path, figures):
    """32 problems x 7 implementations (an LLM study's shapes) at one row of 16 in would give bars of 0.04 in:
    they wrap into rows of groups, on one y scale, as the bandwidth plot does."""
    shapes = [(m, n, k) for m in (1, 16, 64, 128) for _, n, k in DECODE_SHAPES]
    (plot,) = draw("percent_of_baseline", rows_of(problems=shapes), tmp_path)
    fig = figures["pct_of_baseline_f16_f32acc_tn"]
    assert len(fig.axes) > 1 and fig.get_figwidth() <= 16
    ticks = [t.get_text() for a in fig.axes for t in a.get_xticklabels()]
    assert sorted(ticks) == sorted(f"{m}x{n}x{k}" for m, n, k in shapes)  # each problem once, in one of the rows
    assert len({a.get_ylim() for a in fig.axes}) == 1 and len({a.get_xlim() for a in fig.axes}) == 1
    renderer = rendered(fig)
    bars = [b for a in fig.axes for c in a.containers if isinstance(c, BarContainer) for b in c]
    assert len(bars) == len(shapes) * 7
    assert min(b.get_window_extent(renderer).width for b in bars) / fig.dpi >= 0.1  # wide enough for its number
    for ax in fig.axes:
        assert not overlapping_tick_labels(fig, ax)
        assert ax.get_ylabel() == ""  # a row is too short for the label: one runs down the figure
    assert "% of baseline" in fig.get_supylabel()
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(legend) == 8 and "(baseline) = 100%" in legend[0]


def test_percent_bars_that_fit_in_one_row_keep_their_figure(tmp_path, figures):
    draw("percent_of_baseline", rows_of(problems=DECODE_SHAPES[:3]), tmp_path)
    fig = figures["pct_of_baseline_f16_f32acc_tn"]
    assert len(fig.axes) == 1 and tuple(fig.get_size_inches()) == (0.33 * 21 + 0.6 * 3 + 2, 4.8)
    assert fig.axes[0].get_ylabel().startswith("% of baseline")


# -- roofline, errors ---------------------------------------------------------------------------------------------

def test_roofline_names_every_problem_and_its_ceilings(tmp_path, figures):
    draw("roofline", committed("library-vs-handwritten"), tmp_path)
    ax = figures["roofline_f16_f32acc_tn_NVIDIA H200"].axes[0]
    named = {t.get_text() for t in ax.texts}
    assert {"4096x4096x4096", "3999x5001x4097", "8192x8192x8192"} <= named
    fig = figures["roofline_f16_f32acc_tn_NVIDIA H200"]
    renderer = rendered(fig)
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the words, without the leader lines
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])  # stacked, not overprinted
    assert any("ceilings: 989 TFLOP/s, 4.80 TB/s" in t.get_text() for t in ax.get_legend().get_texts())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


CUTLASS = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"
DECODE_SHAPES = [(1, n, k) for n, k in ((4096, 4096), (6144, 4096), (14336, 4096), (4096, 14336), (8192, 8192),
                                        (10240, 8192), (28672, 8192), (8192, 28672))]  # arithmetic intensity ~1


def streaming(rows: pd.DataFrame, gbs: dict[str, float]) -> pd.DataFrame:
    """rows timed as if each implementation streamed its unique bytes at gbs[implementation] GB/s (a
    memory-bound problem's time), with 0.5% noise."""
    rows = rows.copy()
    rng = np.random.default_rng(3)
    samples = [list(b / (gbs[i] * 1e9) * 1e3 * (1 + 0.005 * rng.standard_normal(40)))
               for b, i in zip(rows["unique_bytes"], rows["implementation"])]
    rows["samples_ms"] = samples
    rows["median_ms"] = [float(np.median(s)) for s in samples]
    rows["tflops"] = rows["flops"] / (rows["median_ms"] * 1e-3) / 1e12
    return rows


def bars_by_problem(fig) -> dict[tuple[str, float], str]:
    """{(problem, bar height rounded to 0.01): the number written on the bar} over every row of panels."""
    out = {}
    for ax in fig.axes:
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        written = {(round(t.xy[0], 6), round(t.xy[1], 6)): t.get_text() for t in ax.texts}
        for c in (c for c in ax.containers if isinstance(c, BarContainer)):
            for b in c:
                centre = b.get_x() + b.get_width() / 2
                top = next(v for (x, _), v in written.items() if abs(x - centre) < 1e-6)
                out[(ticks[round(centre)], round(b.get_height(), 2))] = top
    return out


def test_bandwidth_bars_are_every_pass_row_of_the_memory_bound_problems(tmp_path, figures):
    gbs = {BASELINE: 3300.0, CUTLASS: 2400.0}
    rows = streaming(rows_of(problems=[(16, 4096, 4096), (64, 8192, 8192), (4096,) * 3], sweep=False,
                             impls=[BASELINE, CUTLASS]), gbs)
    rows.loc[(rows["problem"] == "64x8192x8192") & (rows["implementation"] == CUTLASS), "status"] = "FAIL"
    (plot,) = draw("bandwidth", rows, tmp_path)
    fig = figures["bandwidth_f16_f32acc_tn_NVIDIA H200"]
    rates = rows.join(memory_rates(rows))
    assert list(rates.loc[rates["memory_bound"], "problem"].unique()) == ["16x4096x4096", "64x8192x8192"]
    ok = rates[rates["memory_bound"] & (rates["status"] == "PASS")]
    expected = {(p, round(v, 2)): f"{g:.0f}" for p, v, g in zip(ok["problem"], ok["pct_of_hbm_roofline"],
                                                                 ok["achieved_gbs"])}
    assert bars_by_problem(fig) == expected  # one bar per PASS row, the 4096^3 (compute-bound) problem left out
    for (_p, height), text in expected.items():  # a bar is its GB/s as a share of the H200's 4.8 TB/s
        assert abs(int(text) - 3300) < 40 or abs(int(text) - 2400) < 40
        assert math.isclose(height, int(text) / 4800 * 100, abs_tol=0.05)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16x4096x4096", "64x8192x8192"]
    assert any(line.get_ydata()[0] == 100 and line.get_linestyle() == "--" for line in ax.get_lines())
    assert "HBM roofline: 4800 GB/s = 100%" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert "FAIL" in [t.get_text() for t in ax.texts]  # the failed row's slot names its status
    assert "memory-bound problems only" in plot.caption


def test_bandwidth_plot_of_many_problems_wraps_into_rows_of_readable_bars(tmp_path, figures):
    names = [BASELINE] + [MMA.format(smem=s, stages=t) for s in ("padded", "swizzle") for t in (2, 3, 4)] + [CUTLASS]
    shapes = [(m, n, k) for m in (1, 16, 64, 128) for _, n, k in DECODE_SHAPES]
    rows = streaming(rows_of(problems=shapes), {n: 3000.0 - 100 * i for i, n in enumerate(names)})
    draw("bandwidth", rows, tmp_path)
    fig = figures["bandwidth_f16_f32acc_tn_NVIDIA H200"]
    assert len(fig.axes) > 1 and fig.get_figwidth() <= 16
    assert sum(len(a.get_xticklabels()) for a in fig.axes) == len(shapes)
    renderer = rendered(fig)
    bar_in = min(b.get_window_extent(renderer).width for a in fig.axes for c in a.containers
                 if isinstance(c, BarContainer) for b in c) / fig.dpi
    assert bar_in >= 0.1  # wide enough for its number, written up it
    for ax in fig.axes:
        assert not overlapping_tick_labels(fig, ax)


def test_bandwidth_plot_says_why_it_is_not_drawn(tmp_path):
    compute_bound = rows_of(problems=[(2048,) * 3, (4096,) * 3], sweep=False)
    (plot,) = PLOT_KINDS["bandwidth"](compute_bound, tmp_path)
    assert plot.skipped and "no memory-bound problem" in plot.skipped and not plot.files
    failed = rows_of(problems=[(16, 4096, 4096)], sweep=False)
    failed["status"] = "FAIL"
    (plot,) = PLOT_KINDS["bandwidth"](failed, tmp_path)
    assert plot.skipped == "no PASS row with a time on a memory-bound problem"
    unknown = rows_of(problems=[(16, 4096, 4096)], sweep=False)
    unknown["gpu"] = "Mystery GPU 9000"
    (plot,) = PLOT_KINDS["bandwidth"](unknown, tmp_path)
    assert plot.skipped == "no HBM bandwidth for 'Mystery GPU 9000' in gemmcompare/peaks.py"


def bandwidth_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts if "GB/s" in t.get_text()]


def test_roofline_writes_bandwidth_beside_a_few_memory_bound_problems(tmp_path, figures):
    rows = streaming(rows_of(problems=[(1, 4096, 4096), (16, 4096, 4096), (4096,) * 3], sweep=False),
                     {BASELINE: 3300.0, CUTLASS: 2400.0})
    (plot,) = draw("roofline", rows, tmp_path)
    texts = bandwidth_texts(figures["roofline_f16_f32acc_tn_NVIDIA H200"].axes[0])
    assert len(texts) == 2  # the fastest row of each memory-bound problem
    import re
    assert all(re.fullmatch(r"3\d{3} GB/s, \d{2}% of HBM roofline", t) for t in texts), texts  # integers, no 3.3e+03
    assert "fastest row carries its achieved bandwidth" in plot.caption


def test_roofline_leaves_bandwidth_to_its_plot_when_many_problems_share_an_intensity(tmp_path, figures):
    rows = streaming(rows_of(problems=DECODE_SHAPES + [(4096,) * 3], sweep=False), {BASELINE: 3300.0, CUTLASS: 2400.0})
    (plot,) = draw("roofline", rows, tmp_path)
    ax = figures["roofline_f16_f32acc_tn_NVIDIA H200"].axes[0]
    assert bandwidth_texts(ax) == []  # 8 labels at one intensity and rate would stack into an unreadable list
    assert {f"{m}x{n}x{k}" for m, n, k in DECODE_SHAPES} <= {t.get_text() for t in ax.texts}  # still named
    assert "the bandwidth plot has every row's GB/s" in plot.caption
    assert "fastest row carries" not in plot.caption


def test_error_vs_k_ticks_do_not_overprint(tmp_path, figures):
    assert spaced_ticks([251, 256, 257, 1024, 4096], 4.0, 4) == [251, 1024, 4096]
    draw("error_vs_k", committed("quickstart"), tmp_path)
    fig = figures["error_vs_k_f16_f32acc_tn"]
    for ax in fig.axes:
        assert not overlapping_tick_labels(fig, ax)
        assert ax.get_yscale() == "log" and ax.get_xscale() == "log"


# -- heatmap, distribution, legends -----------------------------------------------------------------------------

def test_heatmap_scale_is_sequential_from_zero_with_values_in_cells(tmp_path, figures):
    draw("heatmap", committed("mma-sync-sweep"), tmp_path)
    fig = figures["sweep_f16_f32acc_tn_mma_sync"]
    panels = [a for a in fig.axes if a.images]
    assert panels
    for ax in panels:
        image = ax.images[0]
        assert image.norm.vmin == 0 and image.norm.vmax >= 100 and image.get_cmap().name == "viridis"
        grid = image.get_array()
        values = {f"{v:.0f}" for v in np.ma.compressed(grid)}
        assert values <= {t.get_text() for t in ax.texts}  # each coloured cell writes its value


def test_distribution_has_a_panel_per_problem_with_times(tmp_path, figures):
    rows = rows_of(problems=[(1024,) * 3, (2048,) * 3, (4096,) * 3], sweep=False)
    (plot,) = draw("distribution", rows, tmp_path)
    fig = figures["distribution_f16_f32acc_tn"]
    panels = [a for a in fig.axes if a.get_title()]
    assert [a.get_title() for a in panels] == ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096"]
    assert "median − 1 (%)" in panels[0].get_xlabel()
    times = [t.get_text() for a in fig.axes for t in a.get_yticklabels() if "CV" in t.get_text()]
    assert any("µs" in t for t in times)  # small problems in microseconds
    assert all(len(a.collections) >= 2 for a in panels)  # violins and the sample dots


def test_more_implementations_than_fit_get_a_key_table_and_no_cut_names(tmp_path, figures):
    rows = committed("cutlass-sm90-sweep")
    draw("throughput_vs_size", rows[rows["contract"] == "f16_f32acc_tn"], tmp_path)
    fig = figures["throughput_f16_f32acc_tn"]
    assert fig.legends and fig.legends[0].get_title().get_text().startswith("key")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(labels) == 15 and not any("…" in l for l in labels)
    markers = {(tuple(np.round(c.lines[0].get_color() if isinstance(c.lines[0].get_color(), tuple) else (0,), 3)),
                c.lines[0].get_marker()) for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)}
    assert len(markers) == 15  # colour and marker together tell every implementation apart


def test_every_kind_draws_or_says_why(tmp_path):
    rows = make_rows("r1", problems=[(512,) * 3, (1024,) * 3, (2048,) * 3],
                     statuses={MMA.format(smem="padded", stages=2): Status.FAIL})
    report = build_report((receipt_for("r1"), pd.DataFrame([r.to_record() for r in rows])), tmp_path / "r")
    assert {p.kind for p in report.plots} == set(PLOT_KINDS)
    for p in report.plots:
        assert p.skipped or (p.png.exists() and p.png.stat().st_size > 5000), p.title
    # one GPU, and rows without energy figures: the only ones not drawn
    assert [p.kind for p in report.plots if p.skipped] == ["architectures", "energy_vs_speed"]


def test_a_png_keeps_every_implementation_colour_its_figure_draws(tmp_path):
    """The PNG writer reduces to a 256-colour palette by median cut, which spends colours by area: on the LLM
    study's roofline the decode row's orange markers became the split_k row's red, and two implementations
    shared a colour. A figure whose large image uses up the palette, and small orange markers: the PNG must
    still hold that orange."""
    import matplotlib
    from matplotlib.figure import Figure
    from PIL import Image

    from gemmcompare.report.plots import common

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    x = np.linspace(0, 1, 400)
    ax.imshow(np.outer(x, x[::-1]) + np.outer(x[::-1], np.ones_like(x)) * 0.3, cmap="viridis", extent=(0, 1, 0, 1))
    ax.plot([0.2, 0.5, 0.8], [0.5, 0.5, 0.5], "o", color=matplotlib.colormaps["tab10"](1), markersize=5)
    path = tmp_path / "markers.png"
    common.write_figure(fig, [path])
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=float).reshape(-1, 3)
    orange = np.asarray(common.IMPLEMENTATION_RGB[1], dtype=float)
    assert np.sqrt(((rgb - orange) ** 2).sum(axis=1)).min() <= common.COLOUR_TOLERANCE
    # and a figure whose colours a palette does keep is still reduced to one (a third of the bytes)
    plain = Figure(figsize=(4, 3))
    plain.add_subplot().plot([0, 1], [0, 1], color=matplotlib.colormaps["tab10"](1))
    common.write_figure(plain, [tmp_path / "line.png"])
    assert Image.open(tmp_path / "line.png").mode == "P"
