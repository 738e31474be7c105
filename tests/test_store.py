"""SQLite store and run folders (CPU)."""

import json

from gemmcompare.results import Result, Status
from gemmcompare.store import RunFolder, Store, load_result_file


def row(run="r1", impl="library.cublas", status=Status.PASS, med=0.5):
    return Result(run, "64x64x64", 64, 64, 64, 1, "f16_f32acc_tn", impl, "library", {"a": 1}, status,
                  samples_ms=[] if med is None else [med, med * 1.01], median_ms=med, tflops=1.23456789012345)


def test_rows_round_trip_at_full_precision(tmp_path):
    s = Store(tmp_path / "g.db")
    s.create_run({"run_id": "r1", "name": "t", "status": "running", "receipt": {"gpu": "X"}})
    s.add_result(row())
    df = s.results("r1")
    assert df.loc[0, "tflops"] == 1.23456789012345
    assert df.loc[0, "samples_ms"] == [0.5, 0.505]
    assert df.loc[0, "params"] == {"a": 1}
    assert s.done_keys("r1") == {("64x64x64", "f16_f32acc_tn", "library.cublas")}
    assert s.find_run("latest")["receipt"] == {"gpu": "X"}


def test_store_is_append_only_across_runs(tmp_path):
    path = tmp_path / "g.db"
    for rid in ("a", "b"):
        s = Store(path)
        s.create_run({"run_id": rid, "name": "t", "status": "running", "receipt": {}})
        s.add_result(row(run=rid))
        s.close()
    assert len(Store(path).results()) == 2


def test_run_folder_files(tmp_path):
    f = RunFolder(tmp_path / "run")
    f.write_receipt({"gpu": "X"})
    f.add(row())
    f.add(row(impl="library.torch_matmul", status=Status.SKIP, med=None))
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["receipt"]["gpu"] == "X" and len(data["results"]) == 2
    receipt, df = load_result_file(tmp_path / "run" / "results.csv")
    assert list(df["implementation"]) == ["library.cublas", "library.torch_matmul"]
    assert df.loc[0, "samples_ms"] == [0.5, 0.505]


def test_resumed_folder_keeps_csv_readable(tmp_path):
    f = RunFolder(tmp_path / "run")
    f.write_receipt({"gpu": "X"})
    f.add(row())
    again = RunFolder(tmp_path / "run")  # what --resume does
    again.write_receipt({"gpu": "X"})
    again.add(row(impl="library.torch_matmul"))
    receipt, df = load_result_file(tmp_path / "run" / "results.csv")
    assert list(df["implementation"]) == ["library.cublas", "library.torch_matmul"]
    assert df.loc[0, "params"] == {"a": 1} and df.loc[1, "samples_ms"] == [0.5, 0.505]


def test_shipped_commit_wins_over_a_foreign_git(monkeypatch):
    """A tree copied to a GPU machine may sit on some other commit's .git: the commit the shipper
    names is the one the receipt records."""
    from gemmcompare.receipt import git_state

    monkeypatch.setenv("GEMMCOMPARE_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    monkeypatch.setenv("GEMMCOMPARE_GIT_DIRTY", "0")
    state = git_state()
    assert state["git_commit"] == "0123456789abcdef0123456789abcdef01234567" and state["git_dirty"] is False
    monkeypatch.delenv("GEMMCOMPARE_GIT_COMMIT")
    assert git_state()["git_commit"] != "0123456789abcdef0123456789abcdef01234567"


def test_a_row_note_of_several_parts_is_not_repeated_by_a_second_check():
    """A Python row's note has several '; '-separated parts, and each fixture's check prepares the row again
    (llm-shapes/compile-cab9e82 showed torch.compile's note twice before): each part appears once, in order."""
    row = Result("r", "64x64x64", 64, 64, 64, 1, "f16_f32acc_tn", "library.torch_compile", "library", {},
                 Status.PASS)
    note = "timed as replays of a CUDA graph; compile 7.35 s, outside timing; inductor's code runs mm"
    row.add_note(note)
    row.add_note(note)
    row.add_note("THROTTLED: 100%")
    assert row.notes == note + "; THROTTLED: 100%"
