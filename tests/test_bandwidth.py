"""Achieved HBM bandwidth beside % of cuBLAS (issue 25): unique bytes / median time in GB/s and its share of
the device's HBM ceiling (the model's roofline figure), shown only for memory-bound problems, NaN where the
device has no HBM figure (CPU only)."""

from __future__ import annotations

import math

import pandas as pd

from gemmcompare.model.devices import device_spec
from gemmcompare.problems import GemmProblem
from gemmcompare.report.bandwidth import hbm_ceiling, memory_rates
from gemmcompare.report.tables import display_table, summary_table, tables_markdown

DECODE = GemmProblem(16, 4096, 4096)  # BF16 in and out: B's 32 MiB dominate
SQUARE = GemmProblem(4096, 4096, 4096)
DECODE_GBS = (16 * 4096 + 4096 * 4096 + 16 * 4096) * 2 / 16.3e-6 / 1e9  # 2074.6 GB/s at cuBLAS's 16.3 us


def row(problem: GemmProblem, median_ms: float, *, gpu="NVIDIA H200", status="PASS", impl="library.cublas",
        prediction=None) -> dict:
    return {"run_id": "r", "gpu": gpu, "contract": "bf16_f32acc_tn", "problem": f"{problem.m}x{problem.n}x{problem.k}",
            "m": problem.m, "n": problem.n, "k": problem.k, "batch": 1, "implementation": impl, "family": "library",
            "is_baseline": impl == "library.cublas", "status": status, "median_ms": median_ms,
            "flops": 2 * problem.m * problem.n * problem.k, "unique_bytes": problem.unique_bytes(2, 2, 2),
            "peak_tflops": 989.4, "prediction": prediction or {}}


def test_a_decode_row_gets_unique_bytes_over_its_time():
    summary = summary_table(pd.DataFrame([row(DECODE, 0.0163)]))
    r = summary.iloc[0]
    expected = DECODE_GBS
    assert math.isclose(r["achieved_gbs"], expected, rel_tol=1e-12)
    assert math.isclose(r["pct_of_hbm_roofline"], 100 * expected * 1e9 / 4.8e12, rel_tol=1e-12)  # H200: 4.8 TB/s
    assert r["memory_bound"]
    shown = display_table(summary).iloc[0]
    assert shown["GB/s"] == f"{expected:.1f}" and shown["% of HBM roofline"] == f"{100 * expected / 4800:.1f}"


def test_the_ceiling_is_the_models_figure_for_the_device():
    assert hbm_ceiling("NVIDIA H200") == device_spec("NVIDIA H200").memory_bandwidth == 4.8e12
    assert hbm_ceiling("NVIDIA L4") == 300e9  # the model's table has it; gemmcompare.peaks does not
    assert hbm_ceiling("NVIDIA H200", {"bandwidth": 4.0e12}) == 4.0e12  # what the row's prediction used


def test_a_compute_bound_problem_shows_no_bandwidth_columns():
    summary = summary_table(pd.DataFrame([row(SQUARE, 0.19), row(DECODE, 0.0163)]))
    square = summary[summary["problem"] == "4096x4096x4096"].iloc[0]
    assert not square["memory_bound"] and square["achieved_gbs"] > 0  # computed at full precision all the same
    alone = display_table(summary[summary["problem"] == "4096x4096x4096"])
    assert "GB/s" not in alone and "% of HBM roofline" not in alone
    mixed = display_table(summary)
    assert list(mixed["GB/s"]) == ["2074.6", ""]  # the smaller problem first; the square one left blank
    md = tables_markdown(summary)
    assert md.count("% of HBM roofline") == 1  # the decode problem's table only


def test_no_hbm_figure_gives_nan_not_a_number():
    rates = memory_rates(pd.DataFrame([row(DECODE, 0.0163, gpu="Mystery GPU 9000")]))
    assert math.isclose(rates["achieved_gbs"].iloc[0], DECODE_GBS)  # bytes and time are known
    assert math.isnan(rates["pct_of_hbm_roofline"].iloc[0]) and not rates["memory_bound"].iloc[0]


def test_a_failed_row_gets_no_bandwidth():
    rates = memory_rates(pd.DataFrame([row(DECODE, 0.0163, status="FAIL")]))
    assert math.isnan(rates["achieved_gbs"].iloc[0]) and math.isnan(rates["pct_of_hbm_roofline"].iloc[0])


def test_the_roofline_plot_marks_memory_bound_problems_only(tmp_path):
    from gemmcompare.report.data import normalise_rows
    from gemmcompare.report.plots.roofline import BANDWIDTH_NOTE, plot_roofline

    def plot(problem, ms):
        rows = normalise_rows(pd.DataFrame([row(problem, ms)]))
        rows["tflops"] = rows["flops"] / (rows["median_ms"] * 1e-3) / 1e12
        rows["samples_ms"] = [[ms] * 5]
        (p,) = plot_roofline(rows, tmp_path)
        return p

    assert BANDWIDTH_NOTE in plot(DECODE, 0.0163).caption
    assert BANDWIDTH_NOTE not in plot(SQUARE, 0.19).caption
