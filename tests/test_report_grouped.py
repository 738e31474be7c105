"""The report's section for grouped problems (gemmcompare/report/grouped_lead.py): each kind against the best library
row, and the reasons beside every lead of 10% or more, from synthetic rows."""

import math

import pandas as pd

from gemmcompare.report.build import build_report
from gemmcompare.report.grouped_lead import against_best_library, grouped_section, leads, reasons

BF16 = "bf16_bf16out_f32acc_tn"
GPU = "NVIDIA H100 80GB HBM3"  # the model's device table knows its HBM ceiling (3.35 TB/s)
TUNED, HAND = "cutlass.tuned[template=sm90_grouped,tune=auto]", "hopper.grouped.tuned[tune=auto]"
FAMILY = {"cutlass": "cutlass", "hopper": "hopper.grouped", "library": "library"}


def _rows(problem, ms, times, unique_bytes=1e9, status="PASS"):
    grouped = {"n": 256, "k": 512, "ms": list(ms), "layout": "contiguous"}
    return [{"contract": BF16, "problem": problem, "implementation": impl, "family": FAMILY[impl.split(".")[0]],
             "median_ms": t, "status": status, "grouped": grouped, "unique_bytes": unique_bytes, "flops": 1e9,
             "peak_tflops": 989.0, "gpu": GPU} for impl, t in times.items()]


def _table():
    return pd.DataFrame(
        # 2 of 4 experts busy, 52 tokens each, the busiest 100 of a mean of 26: skewed; 1 GB in 0.4 ms: 2.5 TB/s
        _rows("g4 skewed", [100, 0, 0, 4], {"library.torch_grouped_mm": 0.8, "library.cublas_grouped": 0.4,
                                            TUNED: 0.3, HAND: 0.5, "library.triton_grouped": 0.2})
        # 8 tokens each: tiny groups; the library row at 1 GB / 2 ms, 0.5 TB/s: compute
        + _rows("g4 tiny", [8, 8, 8, 8], {"library.cublas_loop": 2.0, TUNED: 2.1, HAND: 1.0})
        + _rows("g2 failed", [1, 1], {"library.torch_grouped_mm": 1.0, TUNED: 0.1}, status="FAIL"))


def test_each_kind_is_read_against_the_fastest_library_row_and_triton_beside_the_kinds():
    t = against_best_library(_table()).set_index("problem")
    assert sorted(t.index) == ["g4 skewed", "g4 tiny"]  # a problem with no PASSing library row has no line
    skewed, tiny = t.loc["g4 skewed"], t.loc["g4 tiny"]
    assert skewed["library"] == "library.cublas_grouped"  # not the baseline: the fastest library row
    assert math.isclose(skewed["CUTLASS %"], 400 / 3) and math.isclose(skewed["hand-written %"], 80.0)
    assert math.isclose(skewed["Triton %"], 200.0)  # Triton's grouped GEMM is not a library row here
    assert (skewed["busy"], skewed["experts"]) == (2, 4) and math.isclose(skewed["per_busy"], 52.0)
    assert math.isclose(skewed["skew"], 100 / 26) and math.isclose(skewed["library_gbs"], 2500.0)
    assert math.isclose(skewed["library_pct_hbm"], 100 * 2.5e12 / 3.35e12, rel_tol=1e-3)
    assert tiny["library"] == "library.cublas_loop" and math.isnan(tiny["Triton %"])


def test_every_lead_of_ten_percent_names_its_reasons():
    t = against_best_library(_table())
    found = leads(t).set_index(["problem", "kind"])
    assert sorted(found.index) == [("g4 skewed", "CUTLASS"), ("g4 skewed", "Triton"), ("g4 tiny", "hand-written")]
    skewed = found.loc[("g4 skewed", "CUTLASS"), "reasons"]
    assert "skew (3.8x the mean)" in skewed and "bandwidth (the library row at 2500 GB/s, 75% of HBM)" in skewed
    assert "tiny groups" not in skewed  # 52 tokens per busy expert
    tiny = found.loc[("g4 tiny", "hand-written"), "reasons"]
    assert tiny.startswith("tiny groups (8.0 tokens per busy expert)") and "compute (the library row at 15% of HBM" in tiny
    assert "skew" not in tiny and found.loc[("g4 tiny", "hand-written"), "% of best library"] == 200.0
    # no HBM figure (a GPU the model does not know): no bandwidth or compute reason, never a guess
    rec = t[t["problem"] == "g4 tiny"].iloc[0].to_dict() | {"library_pct_hbm": math.nan}
    assert reasons(rec) == ["tiny groups (8.0 tokens per busy expert)"]


def test_the_section_is_in_the_report_only_for_grouped_runs(tmp_path):
    section = grouped_section(_table())
    assert "3 leads of 10% or more over the best library row at 2 of 2 grouped problems." in section.markdown
    assert "<h2>Grouped problems against the best library row</h2>" in section.html
    dense = pd.DataFrame(_rows("64x64x64", [1], {"library.cublas_loop": 1.0})).assign(grouped=None)
    assert grouped_section(dense) is None and grouped_section(pd.DataFrame()) is None
    rows = _table().assign(run_id="r1", is_baseline=lambda d: d["implementation"] == "library.torch_grouped_mm",
                           m=0, n=256, k=512, batch=1)
    report = build_report(({"run_id": "r1", "gpu": GPU}, rows), tmp_path / "rep", plots=[])
    text = report.markdown.read_text()
    assert "## Grouped problems against the best library row" in text and "### Where another kind leads" in text
    assert "Grouped problems against the best library row" in report.html.read_text()
