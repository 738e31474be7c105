"""The one vocabulary of runs (gemmcompare/store/sources.py, README "Naming runs"): every form through every
command that reads runs. report, compare and gemmcompare.load/compare take one run; history and dashboard every
run; a file that is not a run is exit 2 (SourceError) saying what it is and what to pass, in the caller's terms.

The report, compare and history writers are stubbed where a test checks only which run a command read: the
resolution is the command's own, the plots are not the point (tests/test_report.py and test_compare.py draw them).
"""

from __future__ import annotations

import gzip
import lzma
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import gemmcompare
from gemmcompare.cli import main
from gemmcompare.dashboard.runs import find_runs
from gemmcompare.history import read_runs
from gemmcompare.store import RunFolder, Store
from gemmcompare.store.sources import MAX_LISTED, SourceError, find_sources, load_source, run_folders
from test_report import make_rows, receipt_for, store_run

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ((256,) * 3, (512,) * 3)
ONE_RUN = ("report", "compare", "load")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """g.db with runs s0 and s1 (their folders under runs/), and run r2 three folders down, in no store."""
    store = Store(tmp_path / "g.db")
    for i in range(2):
        store_run(store, f"s{i}", make_rows(f"s{i}", PROBLEMS, seed=i, impls={"library.cublas"}),
                  started=f"2025-03-0{i + 1}T00:00:00", folder=tmp_path / "runs" / f"s{i}")
    store.close()
    deep = RunFolder(tmp_path / "more" / "b" / "c" / "r2")
    deep.write_receipt(receipt_for("r2", started_at="2025-03-05T00:00:00"))
    deep.add_many(make_rows("r2", PROBLEMS, seed=5, impls={"library.cublas"}))
    return tmp_path


@pytest.fixture
def read_by(monkeypatch):
    """Stubs for the commands' writers: each records the run ids it was handed."""
    import gemmcompare.report as report
    import gemmcompare.verdicts as verdicts

    seen: list = []

    class Report:
        def text_summary(self):
            return "stub report"

    def build_report(pair, out, **kw):
        seen.append(sorted(set(pair[1]["run_id"])))
        return Report()

    def write_comparison(comp, out, **kw):
        seen.append(comp.base_label)
        seen.append(comp.cand_label)
        return [out / "compare.csv", out / "compare.md", out / "compare.html"]

    monkeypatch.setattr(report, "build_report", build_report)
    monkeypatch.setattr(verdicts, "write_comparison", write_comparison)
    return seen


def one_run(command: str, source: str, tmp: Path, store: Path | None = None) -> tuple[int, str]:
    """(exit code, the run id read) of `command` on `source`; a SourceError is exit 2, as on the command line."""
    if command == "load":
        try:
            df, receipt = gemmcompare.load(source, store=store)
        except SourceError:
            return 2, ""
        return 0, receipt["run_id"]
    args = ["--store", str(store)] if store else []
    if command == "report":
        return main(["report", source, "--out", str(tmp / "out"), *args]), ""
    return main(["compare", source, source, "--out", str(tmp / "out"), *args]), ""


# -- one run: report, compare, load ----------------------------------------------------------------------------

@pytest.mark.parametrize("command", ONE_RUN)
def test_every_one_run_form_reads_the_run_it_names(tree, command, read_by, capsys):
    forms = {  # form -> the run it names
        str(tree / "runs" / "s0"): "s0",  # a run folder
        str(tree / "runs" / "s0" / "results.json"): "s0",  # a results file
        str(tree / "runs" / "s0" / "results.csv"): "s0",
        "s0": "s0",  # a run id in the store
        "s": None,  # an ambiguous prefix
        "latest": "s1",
        str(tree / "g.db"): "s1",  # a store: its latest run
        f"{tree / 'g.db'}:s0": "s0",  # STORE.db:RUN
        str(tree / "more"): "r2",  # a folder with one run below it
    }
    for source, run_id in forms.items():
        read_by.clear()
        code, loaded = one_run(command, source, tree, store=tree / "g.db")
        assert code == (0 if run_id else 2), (source, capsys.readouterr().err)
        if command == "load":
            assert loaded == (run_id or ""), source
        elif run_id:
            got = read_by[0] if command == "report" else read_by
            assert got in ([run_id], [run_id, run_id]), (source, read_by)
    if command != "load":
        capsys.readouterr()


def test_compressed_results_read_as_the_plain_ones(tree):
    folder = tree / "runs" / "s0"
    plain = load_source(folder).rows
    for name, compress in (("results.json.xz", lzma.compress), ("results.csv.gz", gzip.compress)):
        packed = tree / "packed" / name.replace(".", "_")
        packed.mkdir(parents=True)
        shutil.copy(folder / "receipt.json", packed)
        (packed / name).write_bytes(compress((folder / name.rsplit(".", 1)[0]).read_bytes()))
        for source in (packed, packed / name):
            assert list(load_source(source).rows["median_ms"]) == list(plain["median_ms"]), source


def test_a_store_given_for_one_run_says_which_run_it_read(tree, read_by, capsys):
    assert main(["report", str(tree / "g.db"), "--out", str(tree / "out")]) == 0
    err = capsys.readouterr().err
    assert f"{tree / 'g.db'} holds 2 runs: reading the latest, s1 ({tree / 'g.db'}:RUN_ID names another)" in err
    df, receipt = gemmcompare.load(tree / "g.db")
    assert receipt["run_id"] == "s1" and "gemmcompare.load(" in df.attrs["note"] and "run='RUN_ID'" in df.attrs["note"]
    df, receipt = gemmcompare.load(tree / "g.db", run="s0")
    assert receipt["run_id"] == "s0" and "note" not in df.attrs
    assert main(["report", str(tree / "more"), "--out", str(tree / "out")]) == 0
    assert f"reading the one run below it, {tree / 'more' / 'b' / 'c' / 'r2'}" in capsys.readouterr().err


@pytest.mark.parametrize("command", ONE_RUN)
def test_a_folder_of_runs_lists_them_with_the_argument_to_pass(tree, command, read_by, capsys):
    code, _ = one_run(command, str(tree), tree)
    assert code == 2
    if command == "load":
        with pytest.raises(SourceError) as err:
            gemmcompare.load(tree)
        message = str(err.value)
    else:
        message = capsys.readouterr().err
    first = tree / "more" / "b" / "c" / "r2"
    assert f"{tree} is not one run: it holds 3 run folders below it" in message
    assert (f"e.g. '{first}'" if command == "load" else f"e.g. {first}") in message
    for run in (first, tree / "runs" / "s0", tree / "runs" / "s1"):
        assert f"\n  {run}" in message
    assert f"gemmcompare dashboard {tree}" in message
    assert one_run(command, str(first), tree)[0] == 0  # the argument it names works


def test_a_long_list_of_runs_is_cut(tmp_path):
    for i in range(MAX_LISTED + 3):
        (tmp_path / f"run{i:02d}").mkdir()
        (tmp_path / f"run{i:02d}" / "results.json").write_text('{"receipt": {}, "results": []}')
    with pytest.raises(SourceError) as err:
        load_source(tmp_path)
    assert f"holds {MAX_LISTED + 3} run folders" in str(err.value) and "... and 3 more" in str(err.value)
    assert str(err.value).count("\n  ") == MAX_LISTED + 1


# -- not a run -------------------------------------------------------------------------------------------------

def not_runs(tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, a part of the message that says what it is and what to pass)."""
    tmp.mkdir(parents=True, exist_ok=True)
    quick = ROOT / "experiments" / "studies" / "quickstart" / "h200"
    report = tmp / "reports" / "r1"
    report.mkdir(parents=True)
    (report / "report.html").write_text("<html></html>")
    (report / "summary.csv").write_text("run_id,problem,contract,implementation,status\nrun-7,1x1x1,c,i,PASS\n")
    spec = tmp / "spec.yaml"
    spec.write_text("name: x\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n")
    (tmp / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(64)))
    (tmp / "random.bin").write_bytes(bytes((i * 97 + 13) % 256 for i in range(512)))
    (tmp / "empty.json").write_text("")
    (tmp / "notes.txt").write_text("some notes\n")
    (tmp / "stray.json").write_text('{"title": "not results"}')
    (tmp / "results.json.xz").write_bytes(b"not xz at all")
    other = sqlite3.connect(tmp / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    (tmp / "empty_folder").mkdir()
    return {
        "receipt": (quick / "receipt.json", f"is a run's receipt (the environment it ran in), not its rows: pass the run folder {quick} instead"),
        "spec": (spec, "is an experiment spec, not a run: run it first ("),
        "report page": (report / "report.html", "is a report, not a run: pass the run it was drawn from (run run-7"),
        "report folder": (report, "holds a report, not a run: pass the run it was drawn from (run run-7"),
        "report table": (report / "summary.csv", "is a table that gemmcompare report wrote (beside report.html), not a run"),
        "png": (tmp / "fig.png", "is a PNG image, not a run: figures are drawn from a run's rows; pass a run"),
        "random bytes": (tmp / "random.bin", "is binary data of no known kind (it starts 0d 6e cf"),
        "empty file": (tmp / "empty.json", "empty.json is an empty file, not a run: pass a run"),
        "text": (tmp / "notes.txt", "is a text file, not a run: pass a run: its folder"),
        "stray json": (tmp / "stray.json", "not gemmcompare results: no 'results' list"),
        "bad xz": (tmp / "results.json.xz", "results.json.xz: cannot read results"),
        "not a store": (tmp / "other.db", "not a gemmcompare store"),
        "empty folder": (tmp / "empty_folder", "holds no run (no results.json or results.csv in it or in any folder below it)"),
        "missing": (tmp / "runs" / "nope", "no such run folder, results file or store"),
        "near miss": (quick.parent / "h20", "no such run folder, results file or store (did you mean "),
    }


@pytest.mark.parametrize("command", ONE_RUN)
def test_what_is_not_a_run_is_exit_2_saying_what_it_is(tmp_path, command, read_by, capsys):
    for name, (path, said) in not_runs(tmp_path / "files").items():
        if command == "load":
            with pytest.raises(SourceError) as err:
                gemmcompare.load(path)
            assert err.value.exit_code == 2 and said in str(err.value), (name, str(err.value))
            continue
        assert one_run(command, str(path), tmp_path) == (2, ""), name
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (name, err)
    assert not read_by


def test_an_empty_file_says_so(tmp_path):
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(SourceError, match="empty.bin is an empty file, not a run: pass a run"):
        load_source(tmp_path / "empty.bin")


def test_a_spec_is_told_in_the_callers_terms(tmp_path, capsys):
    spec = not_runs(tmp_path)["spec"][0]
    with pytest.raises(SourceError, match=r"run it first \(gemmcompare.run\('"):
        gemmcompare.load(spec)
    assert main(["report", str(spec)]) == 2
    assert f"run it first (gemmcompare run {spec})" in capsys.readouterr().err


def test_store_lookups_fail_in_the_callers_terms(tree, monkeypatch, capsys):
    with pytest.raises(SourceError, match="run id prefix 's' is ambiguous in .*g.db: s0, s1"):
        gemmcompare.load("s", store=tree / "g.db")
    with pytest.raises(SourceError, match=r"no run 'zz' in .*g.db \(latest runs: s0, s1\)"):
        gemmcompare.load(f"{tree / 'g.db'}:zz")
    monkeypatch.chdir(tree / "more")  # no store here (and no folder named s0: a path that exists wins over an id)
    with pytest.raises(SourceError, match=r"no store at gemmcompare.db to look it up in \(load\(..., store=PATH\)"):
        gemmcompare.load("s0")
    assert main(["compare", "s0", "s1"]) == 2
    assert "(--store names another)" in capsys.readouterr().err


def test_report_on_a_receipt_is_exit_2_in_a_real_process(tmp_path):
    receipt = ROOT / "experiments" / "studies" / "quickstart" / "h200" / "receipt.json"
    proc = subprocess.run([sys.executable, "-m", "gemmcompare", "report", str(receipt), "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == 2 and proc.stdout == ""
    first, error = proc.stderr.strip().splitlines()  # the command's first line says what it does (progress.py)
    assert first.startswith(f"report {receipt}: loading the run")
    assert error == (f"gemmcompare report: error: {receipt} is a run's receipt (the environment it ran "
                     f"in), not its rows: pass the run folder {receipt.parent} instead")


# -- every run: history and dashboard --------------------------------------------------------------------------

def test_history_and_dashboard_find_the_same_runs_at_any_depth(tree):
    assert run_folders(tree) == [tree / "more" / "b" / "c" / "r2", tree / "runs" / "s0", tree / "runs" / "s1"]
    cases = {  # sources -> the runs they hold
        (str(tree),): {"s0", "s1", "r2"},  # a folder of runs at any depth (stores in it are not searched)
        (str(tree / "more"),): {"r2"},
        (str(tree / "g.db"),): {"s0", "s1"},  # a store: all its runs
        (f"{tree / 'g.db'}:s1",): {"s1"},
        ("s0",): {"s0"},  # a run id in the store
        (str(tree / "runs" / "s0" / "results.csv"),): {"s0"},
        (str(tree / "g.db"), str(tree)): {"s0", "s1", "r2"},  # each run once
    }
    for sources, runs in cases.items():
        assert {s.label for s in find_sources(sources, tree / "g.db")} == runs, sources
        assert set(read_runs(sources, tree / "g.db")["run_id"]) == runs, sources
        if "s0" not in sources:  # the dashboard looks run ids up in ./gemmcompare.db
            assert {r.run_id for r in find_runs(sources)} == runs, sources


def test_history_and_dashboard_commands_read_every_form(tree, monkeypatch, capsys):
    import gemmcompare.history as history

    seen = []
    monkeypatch.setattr(history, "write_history", lambda h, out: seen.append(set(h.table["run_id"])) or [out] * 3)
    monkeypatch.chdir(tree)  # ./gemmcompare.db: where history and dashboard look a bare run id up
    shutil.copy(tree / "g.db", tree / "gemmcompare.db")
    for sources, runs in (([str(tree)], {"s0", "s1", "r2"}), (["g.db"], {"s0", "s1"}), (["g.db:s0"], {"s0"}),
                          (["s1", "more"], {"s1", "r2"})):
        assert main(["history", "library.cublas", "--runs", *sources]) == 0, capsys.readouterr().err
        assert seen.pop() == runs, sources
    assert main(["history", "cublas"]) == 0 and seen.pop() == {"s0", "s1"}  # no --runs: ./gemmcompare.db
    capsys.readouterr()
    assert main(["dashboard", "s1", "more", "--out", str(tree / "site"), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("2 runs, ")
    assert main(["dashboard", str(tree), "--out", str(tree / "site"), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("3 runs, ")


@pytest.mark.parametrize("command", ("history", "dashboard"))
def test_what_is_not_a_run_is_the_same_error_in_history_and_dashboard(tmp_path, command, capsys):
    for name, (path, said) in not_runs(tmp_path / "files").items():
        args = ["history", "x", "--runs", str(path)] if command == "history" else \
            ["dashboard", str(path), "--out", str(tmp_path / "site")]
        assert main(args) == 2, name
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (name, err)


def test_a_source_without_rows_is_named(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text('{"receipt": {"run_id": "e"}, "results": []}')
    with pytest.raises(SourceError, match=f"{tmp_path / 'run'}: holds no run with result rows"):
        find_sources([tmp_path / "run"])
    assert load_source(tmp_path / "run").rows.empty  # one run may be empty: report says 0 rows, compare refuses


def test_hidden_folders_and_folders_inside_runs_are_not_searched(tree):
    hidden = tree / ".cache" / "r9"
    inside = tree / "runs" / "s0" / "old" / "r8"
    for folder in (hidden, inside):
        folder.mkdir(parents=True)
        shutil.copy(tree / "runs" / "s1" / "results.json", folder)
    assert run_folders(tree) == [tree / "more" / "b" / "c" / "r2", tree / "runs" / "s0", tree / "runs" / "s1"]
