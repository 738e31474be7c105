"""The small-kernel study's report step on the CPU (experiments/studies/honest-numbers/small_kernel_timing.py): ncu's per-kernel
records grouped into launches by case, ratios against ncu, the spin kernel's intercept and slope."""

import json
from pathlib import Path

import pytest

from experiment_scripts import load_script



def _module():
    return load_script("studies/honest-numbers/small_kernel_timing.py")


def _ncu_csv(durations_ns):
    head = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
    rows = [f'"{i}","k{i}","gpu__time_duration.sum","nsecond","{d:,.0f}"' for i, d in enumerate(durations_ns)]
    return "\n".join(["==PROF== noise", head, *rows]) + "\n"


def test_report_groups_ncu_records_by_case_and_fits_the_spin(tmp_path, capsys):
    mod = _module()
    cases = mod._cases()
    rows = []
    for c in cases:
        r = dict(c)
        if c["kind"] == "spin":
            nominal = c["ns"] * 1e-6
            r.update(events_ms=nominal + 0.0028, cupti_ms=nominal + 0.0004, kernels_per_launch=1, timer_step_ns=32)
        else:
            r.update(events_ms=0.0055, cupti_ms=0.0038, auto_method="cupti",
                     kernels_per_launch=2 if c["size"] == 256 else 1)
        rows.append(r)
    (tmp_path / "methods.json").write_text(json.dumps({"device": "H200", "cases": rows}))
    order = [{"case": c["case"], "launches": 3} for c in cases]
    (tmp_path / "ncu_cases.json").write_text(json.dumps(order))
    durations = []
    for c in cases:
        per = 2 if c.get("size") == 256 else 1
        each = (c["ns"] if c["kind"] == "spin" else 3700) / per
        durations += [each] * (3 * per)
    (tmp_path / "ncu.csv").write_text(_ncu_csv(durations))
    assert mod.report(tmp_path) == 0
    out = json.loads((tmp_path / "small_kernel_timing.json").read_text())
    first = out["cases"][0]
    assert first["ncu_ms"] == pytest.approx(0.0037) and first["cupti_over_ncu"] == pytest.approx(0.0038 / 0.0037)
    fit = out["spin_fits"]["events_ms"]
    assert fit["intercept_ms"] == pytest.approx(0.0028) and fit["slope"] == pytest.approx(1.0)
    assert "| cublas 256^3 flush |" in capsys.readouterr().out


def test_report_says_when_ncu_records_cannot_be_grouped(tmp_path):
    mod = _module()
    rows = [dict(c, kernels_per_launch=1) for c in mod._cases()]
    (tmp_path / "methods.json").write_text(json.dumps({"cases": rows}))
    (tmp_path / "ncu_cases.json").write_text(json.dumps([{"case": rows[0]["case"], "launches": 5}]))
    (tmp_path / "ncu.csv").write_text(_ncu_csv([1000.0] * 3))
    mod.report(tmp_path)
    assert "not grouped" in json.loads((tmp_path / "small_kernel_timing.json").read_text())["ncu_note"]
