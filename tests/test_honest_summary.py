"""The device script's summary (experiments/studies/honest-numbers/honest_summary.py) on the CPU, from a synthetic work folder: it
must print every part, and say what is missing instead of failing."""

import dataclasses
import json
from pathlib import Path

from experiment_scripts import load_script
from gemmcompare.store.run_folder import RunFolder
from test_report import make_rows, receipt_for



def _module():
    return load_script("studies/honest-numbers/honest_summary.py")


def _run(folder: Path, run_id: str, rows):
    rf = RunFolder(folder / run_id)
    rf.write_receipt(receipt_for(run_id))
    for r in rows:
        rf.add(r)


def test_summary_reads_every_part(tmp_path, capsys):
    work = tmp_path
    (work / "steps.txt").write_text("alignment: exit 0 in 60 s (limit 240 s)\n")
    (work / "small").mkdir()
    (work / "small" / "small_kernel_timing.md").write_text("| case | events |\n|---|---:|\n| cublas 256^3 flush | 5.5 us |\n")
    tight = make_rows("a1", ((4096, 4096, 4100),), sweep=False)
    aligned = [dataclasses.replace(r, contract="f16_f32acc_tn_aligned", storage="aligned", lda=4104, ldb=4104,
                                   ldc=4096, notes="copies A, B into its own buffers inside the timed region")
               for r in tight]
    for r in tight:
        r.storage, r.lda, r.ldb, r.ldc, r.timing_method = "tight", 4100, 4100, 4096, "events"
    _run(work / "runs" / "alignment", "a1", tight + aligned)
    hot = make_rows("t1", ((8192,) * 3,), sweep=False)
    for r in hot:
        r.sm_clock_mhz, r.throttled_fraction, r.median_ms_at_max_clock = 1485.0, 0.9, r.median_ms * 0.75
    _run(work / "runs" / "twice_1", "t1", hot)
    (work / "logs").mkdir()
    (work / "logs" / "compare_twice.log").write_text("result: no regression (exit 0)\n")
    (work / "profile.json").write_text(json.dumps([{"problem": "1024x1024x1024", "event_median_ms": 0.0084,
                                                    "do_bench_median_ms": 0.0086, "ncu_median_ms": 0.0075,
                                                    "do_bench_how": "do_bench over CUDA-graph replays"}]))
    assert _module().main([str(work)]) == 0
    text = capsys.readouterr().out
    assert "alignment: exit 0" in text and "cublas 256^3 flush" in text
    assert "4096x4096x4100 f16_f32acc_tn: 4100/4100/4096" in text and "in place" in text and "copies" in text
    assert "result: no regression (exit 0)" in text and "compare_planted (expected exit 1)" in text
    assert "1485 MHz" in text and "x1.024 of events" in text


def test_summary_of_an_empty_folder_says_what_is_missing(tmp_path, capsys):
    assert _module().main([str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "(no steps.txt)" in text and "(no run: see logs/alignment.log)" in text and "(not run)" in text
