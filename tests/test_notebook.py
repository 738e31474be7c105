"""gemmcompare.table / gemmcompare.plot (the report's tables and figures for a notebook) and the API frames'
sortable `problem` column (issue 40)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import gemmcompare
from gemmcompare.report.tables import display_table, summary_table

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "experiments/studies/quickstart/h200"


@pytest.fixture(scope="module")
def quickstart():
    return gemmcompare.load(QUICKSTART)


def test_problem_sorts_by_size_as_numbers_not_as_text(quickstart):
    df, _ = quickstart
    labels = sorted({str(p) for p in df["problem"]})
    assert len(labels) >= 2 and labels != sorted(labels, key=lambda s: tuple(int(x) for x in s.split("x")))
    pivot = df.pivot_table(index="problem", columns="implementation", values="median_ms", aggfunc="min", observed=True)
    dims = [tuple(int(x) for x in str(p).split("x")) for p in pivot.index]
    assert dims == sorted(dims), f"pivot rows in text order: {list(pivot.index)}"
    ordered = df.sort_values("problem")
    assert [tuple(r) for r in ordered[["m", "n", "k"]].drop_duplicates().itertuples(index=False)] == sorted(
        {(int(m), int(n), int(k)) for m, n, k in zip(df["m"], df["n"], df["k"])})
    assert df["m"].dtype.kind == "i" and df["k"].dtype.kind == "i"


def test_batched_and_odd_labels_sort_after_their_size_and_text():
    from gemmcompare.notebook import sortable_problems

    df = sortable_problems(pd.DataFrame({"problem": ["4096x4096x4096", "64x64x64x8", "257x263x251", "64x64x64", "odd"]}))
    assert list(df["problem"].cat.categories) == ["64x64x64", "64x64x64x8", "257x263x251", "4096x4096x4096", "odd"]


def test_table_is_the_reports_table(quickstart):
    df, receipt = quickstart
    shown = gemmcompare.table(df)
    from gemmcompare.report.data import attach_run
    from gemmcompare.store.run_folder import load_result_file

    rec, rows = load_result_file(QUICKSTART)
    expected = display_table(summary_table(attach_run(rows, rec))).reset_index(drop=True)
    pd.testing.assert_frame_equal(shown, expected)
    assert any(str(v).endswith("(baseline)") for v in shown["implementation"])

    full = gemmcompare.table(df, rounded=False)
    assert len(full) == len(df) and full["median_ms"].notna().any()
    assert pd.api.types.is_float_dtype(full["median_ms"])  # full precision, not strings
    first = full.groupby(["contract", "problem"], sort=False).head(1)
    assert first["is_baseline"].all(), "each problem's rows start with the baseline"


def test_a_filtered_frame_and_loads_pair_work(quickstart):
    df, receipt = quickstart
    some = df[df["implementation"] == "library.cublas"]
    assert len(gemmcompare.table(some)) == len(some)
    assert len(gemmcompare.table((df, receipt))) == len(df)


def test_plot_draws_the_reports_figures_and_says_why_it_skips(quickstart, tmp_path):
    df, _ = quickstart
    figs = gemmcompare.plot(df, "percent_of_baseline", out_dir=tmp_path)
    drawn = [p for p in figs if not p.skipped]
    assert drawn and all(p.png.exists() and p.png.stat().st_size > 5000 for p in drawn)
    assert "data:image/png;base64," in figs._repr_html_()
    skipped = gemmcompare.plot(df, "heatmap", out_dir=tmp_path / "h")
    assert skipped and all(p.skipped for p in skipped), "quickstart has no two-parameter sweep"
    assert "not drawn" in skipped._repr_html_()
    default_dir = gemmcompare.plot(df, "throughput_vs_size")
    assert all(f.exists() for p in default_dir for f in p.files)


@pytest.mark.parametrize("call, message", [
    (lambda df: gemmcompare.plot(df, "rooflin"), "did you mean 'roofline'"),
    (lambda df: gemmcompare.plot(df, 7), "is not a plot kind"),
    (lambda df: gemmcompare.table("results.json"), "expected the DataFrame"),
    (lambda df: gemmcompare.table(df[["m", "n"]]), "no problem, contract, implementation, status column"),
    (lambda df: gemmcompare.plot(df.iloc[:0], "roofline"), "no rows"),
])
def test_bad_input_is_an_input_error_that_says_what(quickstart, call, message):
    df, _ = quickstart
    with pytest.raises(gemmcompare.InputError, match=message):
        call(df)


def test_compare_reads_loads_frames(quickstart):
    df, receipt = quickstart
    verdicts = gemmcompare.compare(df, (df, receipt))
    assert verdicts.attrs["exit_code"] == 0
    assert set(verdicts["problem"].astype(str)) == {str(p) for p in df["problem"]}
