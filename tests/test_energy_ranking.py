"""Where the ranking by energy differs from the ranking by time (gemmcompare/report/energy_ranking.py): a flip counts
only beyond both rows' CIs, FAIL rows and rows without energy take no part, and the study tables and the report
say it."""

import pandas as pd

from gemmcompare.report.energy_ranking import energy_flips, energy_ranking_section, energy_rows, flip_lines


def row(impl, ms, joules, *, problem="8192x8192x8192", contract="bf16", status="PASS", ci_t=0.002, ci_e=0.005):
    return dict(problem=problem, contract=contract, implementation=impl, status=status, median_ms=ms,
                median_ci_rel=ci_t, energy_j_per_gemm=joules, energy_ci_rel=ci_e)


def test_a_faster_row_using_more_energy_beyond_both_cis_is_a_flip():
    df = pd.DataFrame([row("cublas", 1.579, 1.157), row("cutlass", 1.518, 1.207), row("hopper", 1.537, 1.155)])
    flips = energy_flips(df)
    pairs = set(zip(flips["faster"], flips["less energy"]))
    assert pairs == {("cutlass", "cublas"), ("cutlass", "hopper")}
    one = flips[(flips["faster"] == "cutlass") & (flips["less energy"] == "cublas")].iloc[0]
    assert abs(one["time saved %"] - 100 * (1 - 1.518 / 1.579)) < 1e-9
    assert abs(one["energy saved %"] - 100 * (1 - 1.157 / 1.207)) < 1e-9
    ranks = energy_rows(df).set_index("implementation")
    assert ranks.loc["cutlass", "time_rank"] == 1 and ranks.loc["cutlass", "energy_rank"] == 3
    assert ranks.loc["hopper", "energy_rank"] == 1


def test_a_flip_inside_either_ci_is_not_counted():
    # 1% apart in energy, each figure +-0.6%: the intervals overlap
    df = pd.DataFrame([row("a", 1.00, 1.010, ci_e=0.006), row("b", 1.05, 1.000, ci_e=0.006)])
    assert energy_flips(df).empty
    # the time differs by less than its CIs
    df = pd.DataFrame([row("a", 1.000, 1.2, ci_t=0.01), row("b", 1.015, 1.0, ci_t=0.01)])
    assert energy_flips(df).empty
    # the same pair with tight intervals flips
    df = pd.DataFrame([row("a", 1.000, 1.2, ci_t=0.001), row("b", 1.015, 1.0, ci_t=0.001)])
    assert len(energy_flips(df)) == 1


def test_fail_rows_and_rows_without_energy_take_no_part_and_groups_stay_apart():
    df = pd.DataFrame([row("a", 1.0, 2.0, status="FAIL"), row("b", 1.1, 1.0), row("c", 0.9, None),
                       row("d", 0.5, 3.0, contract="fp8"), row("e", 0.6, 1.0, problem="4096x4096x4096")])
    assert set(energy_rows(df)["implementation"]) == {"b", "d", "e"}
    assert energy_flips(df).empty  # one row per (problem, contract): nothing to order


def test_the_lines_say_when_there_is_no_energy_and_when_nothing_flips():
    no_energy = pd.DataFrame([row("a", 1.0, None), row("b", 1.1, float("nan"))])
    assert "no PASS row carries an energy figure" in flip_lines(no_energy)[0]
    assert energy_ranking_section(no_energy) is None
    same = pd.DataFrame([row("a", 1.0, 1.0), row("b", 1.1, 1.2)])
    assert "is the ranking by time" in flip_lines(same)[0]
    section = energy_ranking_section(same)
    assert section is not None and section.table.empty and "<table" not in section.html


def test_the_report_section_lists_each_flip():
    df = pd.DataFrame([row("cublas", 1.579, 1.157), row("cutlass", 1.518, 1.207)])
    lines = flip_lines(df)
    assert lines[0].startswith("energy: the ranking by energy differs") and "at 1 of 1" in lines[0]
    assert "cutlass is 3.9% faster, cublas uses 4.1% less energy per GEMM" in lines[1]
    section = energy_ranking_section(df)
    table_lines = [line for line in section.markdown.splitlines() if line.startswith("| 8192x8192x8192")]
    assert len(table_lines) == 1 and "cutlass" in table_lines[0] and "cublas" in table_lines[0]
    assert "<table" in section.html and "cutlass" in section.html


def test_a_categorical_problem_column_as_loaded_rows_have_it_groups_by_the_problems_present():
    df = pd.DataFrame([row("a", 1.0, 1.2), row("b", 1.1, 1.0)])
    df["problem"] = pd.Categorical(df["problem"], categories=["8192x8192x8192", "1x1x1"])
    assert len(energy_flips(df)) == 1
