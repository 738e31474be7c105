"""Several contracts side by side (report/across.py): the speed-up one contract buys over another on the same
problem, and what it costs against the original inputs."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from gemmcompare.cli import main
from gemmcompare.report import build_report
from gemmcompare.report.across import across_table
from gemmcompare.report.tables import summary_table
from gemmcompare.results import Status
from gemmcompare.spec import parse_spec
from test_report import BASELINE, make_rows, receipt_for

FP8, BF16 = "e4m3_bf16out_f32acc_tn_tensor", "bf16_bf16out_f32acc_tn"


def two_contracts(fp8_speed=1.8, fp8_err=3e-2, records=True):
    """BF16 rows (cuBLAS the baseline) and FP8 rows of the same problems: cuBLAS and one more, faster by
    `fp8_speed`, with a larger error against the original inputs (a DataFrame, or the Results)."""
    bf16 = make_rows("r1", problems=[(4096,) * 3, (8192,) * 3], sweep=False)
    fp8 = make_rows("r1", problems=[(4096,) * 3, (8192,) * 3], sweep=False,
                    slowdown={BASELINE: 1 / fp8_speed, "cutlass[config=sm90_tma_coop_128x256x64_c2x1]": 1 / fp8_speed})
    for r in bf16:
        r.contract, r.max_abs_err_orig, r.max_rel_err_orig = BF16, 0.4, 9e4  # relative: on a near-zero element
    for r in fp8:
        r.contract, r.max_abs_err_orig, r.max_rel_err_orig = FP8, 0.4 * fp8_err / 3e-3, 5e5
    return pd.DataFrame([r.to_record() for r in bf16 + fp8]) if records else bf16 + fp8


def test_each_row_is_set_beside_the_reference_contracts_baseline_on_its_problem():
    table = across_table(summary_table(two_contracts()), BF16)
    fp8_base = table[(table["contract"] == FP8) & (table["implementation"] == BASELINE)]
    assert len(fp8_base) == 2 and all(abs(s - 1.8) < 0.05 for s in fp8_base["speedup"])
    ref = table[table["is_reference"]]
    assert list(ref["implementation"]) == [BASELINE, BASELINE] and list(ref["speedup"]) == [1.0, 1.0]
    assert set(table["max_abs_err_orig"]) == {0.4, 4.0}
    assert set(table["error_ratio"].round(9)) == {1.0, 10.0}  # over the reference row's, on the same inputs
    # problems in size order, the reference contract first within each
    assert list(table["problem"]) == sorted(table["problem"], key=lambda p: int(p.split("x")[0]))
    assert table.groupby("problem")["contract"].first().eq(BF16).all()


def test_without_a_passing_baseline_the_reference_is_the_fastest_passing_row():
    rows = two_contracts()
    rows.loc[(rows["contract"] == BF16) & (rows["implementation"] == BASELINE), "status"] = Status.FAIL.value
    table = across_table(summary_table(rows), BF16)
    assert set(table.loc[table["is_reference"], "implementation"]) == {"cutlass[config=sm90_tma_coop_128x256x64_c2x1]"}


def test_the_report_has_the_section_and_its_csv_and_says_when_nothing_compares(tmp_path):
    report = build_report((receipt_for("r1"), two_contracts()), tmp_path / "r", plots=[], across=BF16)
    md = report.markdown.read_text()
    assert f"## Across contracts: over {BF16}" in md and "x ref" in md and "error vs original inputs" in md
    assert re.search(r"\| +4\.00e\+00 \| +10\.0 \|", md)  # FP8's error against the original inputs, 10x BF16's
    assert "Across contracts" in report.html.read_text() and report.across_csv.exists()
    assert pd.read_csv(report.across_csv)["speedup"].max() > 1.7  # full precision on disk
    none = build_report((receipt_for("r1"), two_contracts()), tmp_path / "n", plots=[], across="f16_f32acc_tn")
    assert "nothing to compare the other contracts with" in none.markdown.read_text()
    plain = build_report((receipt_for("r1"), two_contracts()), tmp_path / "p", plots=[])
    assert "Across contracts" not in plain.markdown.read_text() and plain.across_csv is None


def test_the_receipt_carries_the_specs_choice(tmp_path):
    receipt = {**receipt_for("r1"), "report_across": BF16}
    report = build_report((receipt, two_contracts()), tmp_path / "r", plots=[])
    assert f"over {BF16}" in report.markdown.read_text()


SPEC = """name: x
problems: [{m: 256, n: 256, k: 256}]
contracts: [f16_f32acc_tn, bf16_bf16out_f32acc_tn]
implementations: [library.cublas]
report: {across: ACROSS}
"""


def test_the_spec_names_one_of_its_contracts(tmp_path, capsys):
    assert parse_spec(SPEC.replace("ACROSS", "f16_f32acc_tn")).report.across == "f16_f32acc_tn"
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.replace("ACROSS", "f16_f32acc_tm"))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:5" in err and "across names the contract" in err and "f16_f32acc_tn" in err


def test_report_across_a_contract_the_run_lacks_is_exit_2(tmp_path, capsys):
    from gemmcompare.store import RunFolder

    folder = RunFolder(tmp_path / "run")
    folder.write_receipt(receipt_for("r1"))
    for row in two_contracts(records=False):
        folder.add(row)
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "o"), "--across", "f32_strict_tn", "--plots",
                 "throughput_vs_size"]) == 2
    err = capsys.readouterr().err
    assert "--across f32_strict_tn" in err and BF16 in err and "Traceback" not in err


@pytest.mark.newest_only
@pytest.mark.skipif(__import__("browser_check").find_browser() is None, reason="no chromium binary")
def test_the_across_section_fits_the_page_in_headless_chromium(tmp_path):
    from browser_check import check_page
    from test_report_html import assert_readable

    report = build_report((receipt_for("r1"), two_contracts()), tmp_path / "r", plots=["throughput_vs_size"],
                          across=BF16)
    assert_readable(check_page(report.html, width=1400), 1400)
