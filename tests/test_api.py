"""The Python API (gemmcompare.load, run, compare) and the notebook example (CPU only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import gemmcompare
from gemmcompare.errors import NoDeviceError, SpecError
from gemmcompare.store import SourceError, Store
from test_compare import SLOW
from test_report import make_rows, store_run

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "experiments" / "studies"


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def test_import_is_cheap_and_names_load_on_use():
    code = ("import sys, gemmcompare; heavy = [m for m in ('torch', 'pandas', 'matplotlib', 'numpy') if m in sys.modules];"
            "print(heavy, callable(gemmcompare.load), callable(gemmcompare.run), callable(gemmcompare.compare))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[] True True True"


def test_load_a_committed_run_folder_and_its_csv():
    df, receipt = gemmcompare.load(STUDIES / "quickstart" / "h200")
    assert len(df) == 12 and receipt["gpu"] == "NVIDIA H200" and df.attrs["receipt"] is receipt
    assert (df["gpu"] == "NVIDIA H200").all()
    samples = df["samples_ms"].iloc[0]
    assert isinstance(samples, list) and len(samples) == df["n_samples"].iloc[0] and isinstance(samples[0], float)
    row = df[(df["problem"] == "4096x4096x4096") & (df["contract"] == "f16_f32acc_tn") & df["is_baseline"]].iloc[0]
    assert abs(row["median_ms"] - 0.1853) < 5e-5  # milliseconds, full precision (the README's figure, rounded)
    csv_df, _ = gemmcompare.load(str(STUDIES / "quickstart" / "h200" / "results.csv"))
    assert list(csv_df["median_ms"]) == list(df["median_ms"])


def test_a_gzipped_receipt_loads_as_its_plain_files_do(tmp_path):
    """Large committed receipts keep results.json.gz / results.csv.gz (the repository travels to the GPU machine
    under a size limit): a folder holding only those, or either file named, loads the same rows."""
    import gzip
    import shutil

    plain, receipt = gemmcompare.load(STUDIES / "quickstart" / "h200")
    for name in ("results.json", "results.csv"):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        shutil.copy(STUDIES / "quickstart" / "h200" / "receipt.json", folder / "receipt.json")
        (folder / f"{name}.gz").write_bytes(gzip.compress((STUDIES / "quickstart" / "h200" / name).read_bytes()))
        for source in (folder, folder / f"{name}.gz", str(folder / f"{name}.gz")):
            df, got = gemmcompare.load(source)
            assert list(df["median_ms"]) == list(plain["median_ms"]) and got["gpu"] == receipt["gpu"], source
    # a gzipped file that is not results, or not gzip at all: an error naming the file (exit 2), no traceback
    from gemmcompare.errors import GemmCompareError

    bad = tmp_path / "results.json.gz"
    for content in (gzip.compress(b"[1, 2]"), b"not gzip"):
        bad.write_bytes(content)
        with pytest.raises(GemmCompareError, match="results.json.gz") as err:
            gemmcompare.load(bad)
        assert err.value.exit_code == 2


def test_load_from_a_store_by_file_object_and_id(tmp_path):
    db = tmp_path / "g.db"
    store = Store(db)
    store_run(store, "20250101-a", make_rows("20250101-a"), started="2025-01-01T00:00:00")
    store_run(store, "20250102-b", make_rows("20250102-b", seed=3), started="2025-01-02T00:00:00")
    latest, receipt = gemmcompare.load(db)
    assert receipt["run_id"] == "20250102-b" and set(latest["run_id"]) == {"20250102-b"}
    first, _ = gemmcompare.load(db, run="20250101")
    assert set(first["run_id"]) == {"20250101-a"}
    by_id, _ = gemmcompare.load("20250101-a", store=db)
    assert len(by_id) == len(first)
    obj, _ = gemmcompare.load(store)
    assert set(obj["run_id"]) == {"20250102-b"}
    with pytest.raises(SourceError, match="no run 'nope'"):
        gemmcompare.load("nope", store=db)
    with pytest.raises(SourceError, match="no such run folder"):
        gemmcompare.load(tmp_path / "missing" / "results.json")


def test_compare_gives_a_frame_of_verdicts(tmp_path):
    base = gemmcompare.load(STUDIES / "timing" / "h200" / "timing-check" / "run1")
    same = gemmcompare.compare(base, base)
    assert isinstance(same, pd.DataFrame) and set(same["verdict"]) <= {"SAME", "UNKNOWN"}  # noisy rows: UNKNOWN
    assert same.attrs["exit_code"] == 0 and "no regression" in same.attrs["summary"]
    cand = base[0].copy()
    slow = cand["implementation"].str.startswith("mma_sync") & (cand["problem"] == "1024x1024x1024")
    cand.loc[slow, "samples_ms"] = cand.loc[slow, "samples_ms"].map(lambda s: [x * 1.2 for x in s])
    cand.loc[slow, "median_ms"] *= 1.2
    cand.loc[slow, "pct_of_baseline"] /= 1.2  # the kernel, not the card: its % of the same-run baseline drops too
    cand.attrs["receipt"] = base[1]
    verdicts = gemmcompare.compare(STUDIES / "timing" / "h200" / "timing-check" / "run1", cand)  # a path on one side, a frame on the other
    assert verdicts.loc[verdicts["implementation"].str.startswith("mma_sync")
                        & (verdicts["problem"] == "1024x1024x1024"), "verdict"].tolist() == ["SLOWER"]
    assert verdicts.attrs["exit_code"] == 1 and verdicts.attrs["threshold"] == 0.03


def test_run_on_a_machine_without_a_gpu_raises_what_the_cli_turns_into_exit_3(tmp_path, monkeypatch):
    if _has_cuda():
        pytest.skip("a CUDA device is present: this checks the no-device path")
    monkeypatch.chdir(tmp_path)
    spec = {"name": "api-check", "problems": [{"m": 64, "n": 64, "k": 64}], "contracts": ["f16_f32acc_tn"],
            "implementations": ["library.torch_matmul"]}  # nothing to compile: the check is quick
    with pytest.raises(NoDeviceError) as info:
        gemmcompare.run(spec, store=tmp_path / "g.db", shapes=[(32, 32, 32)], only="torch")
    assert info.value.exit_code == 3 and "no CUDA device" in str(info.value)
    assert not (tmp_path / "g.db").exists()  # nothing measured, nothing stored
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps(spec))  # JSON is YAML
    from gemmcompare.cli import main

    assert main(["run", str(path), "--store", str(tmp_path / "g.db"), "--no-progress"]) == 3
    with pytest.raises(SpecError, match="missing required key 'contracts'"):
        gemmcompare.run({"name": "bad", "problems": [{"m": 1, "n": 1, "k": 1}], "implementations": ["library.cublas"]})


def test_run_compare_and_load_are_the_api_functions_whatever_else_is_imported():
    """The measuring stage (gemmcompare.runner) and the verdicts (gemmcompare.verdicts) are named apart from the
    API's functions: importing them changes nothing about gemmcompare.run / compare / load."""
    code = ("import gemmcompare, gemmcompare.runner.parent, gemmcompare.verdicts as verdicts, types;"
            "from gemmcompare import api, run, compare, load;"
            "from gemmcompare.verdicts import compare as rows_compare;"
            "print(gemmcompare.run is api.run is run, gemmcompare.compare is api.compare is compare,"
            " gemmcompare.load is api.load is load,"
            " all(isinstance(f, types.FunctionType) for f in (run, compare, load)),"
            " rows_compare.__module__, hasattr(api, 'callable_module'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "True True True True gemmcompare.verdicts False"


def test_history_of_the_same_api_runs(tmp_path):
    """history() reads stores and run folders alike (the API and the CLI share it)."""
    from gemmcompare.history import history

    store = Store(tmp_path / "g.db")
    store_run(store, "2025-01-05-run", make_rows("2025-01-05-run"), started="2025-01-05T00:00:00",
              folder=tmp_path / "runs" / "x")
    h = history([tmp_path / "runs", tmp_path / "g.db"], SLOW)
    assert h.table["run_id"].nunique() == 1  # the store and its run folder are one run, kept once


NOTEBOOK = ROOT / "examples" / "h200_run.ipynb"


def test_the_notebook_is_a_valid_notebook_that_runs(tmp_path):
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python"
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code") and isinstance(cell["source"], list)
        if cell["cell_type"] == "code":
            assert "outputs" in cell and "execution_count" in cell
    images = [o for c in nb["cells"] for o in c.get("outputs", [])
              if "image/png" in o.get("data", {}) or "data:image/png;base64," in "".join(o.get("data", {}).get("text/html", ""))]
    assert images, "the committed notebook shows its plot"
    assert "gemmcompare.report." not in json.dumps(nb["cells"]), "the notebook uses the API, not the report's internals"
    code = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    script = tmp_path / "notebook.py"
    script.write_text("import matplotlib\nmatplotlib.use('Agg')\n" + code + "\nprint('NOTEBOOK RAN')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT / "examples",
                          env=env, timeout=300)
    assert proc.returncode == 0 and "NOTEBOOK RAN" in proc.stdout, proc.stderr[-2000:]


def test_the_errors_are_exported_and_catchable_by_name():
    import gemmcompare
    from gemmcompare.errors import GemmCompareError, InputError, NoDeviceError, SpecError
    from gemmcompare.store.sources import SourceError

    assert (gemmcompare.SpecError, gemmcompare.InputError, gemmcompare.NoDeviceError,
            gemmcompare.GemmCompareError, gemmcompare.SourceError) == (SpecError, InputError, NoDeviceError,
                                                                       GemmCompareError, SourceError)
    with pytest.raises(gemmcompare.SourceError):
        gemmcompare.load("no-such-run-folder/")


def test_version_prints_the_version(capsys):
    from gemmcompare import __version__
    from gemmcompare.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"gemmcompare {__version__}"


def test_a_receipt_a_folder_of_runs_and_a_stray_file_each_say_what_to_pass(tmp_path, capsys):
    """report/compare/load on a path that is not one run: exit 2 with what it is and what to pass instead
    (a receipt.json once read as an empty run: 0 rows, exit 0)."""
    import gemmcompare
    from gemmcompare.cli import main

    quickstart = STUDIES / "quickstart" / "h200"
    assert main(["report", str(quickstart / "receipt.json"), "--out", str(tmp_path / "r")]) == 2
    assert f"pass the run folder {quickstart} instead" in capsys.readouterr().err
    with pytest.raises(gemmcompare.SourceError, match="is a run's receipt"):
        gemmcompare.load(quickstart / "receipt.json")

    study = STUDIES / "llm-shapes" / "h200" / "study-e7588f0"
    assert main(["report", str(study), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "holds 2 run folders below it" in err and str(study / "runs" / "merged-run1") in err

    stray = tmp_path / "notes.json"
    stray.write_text('{"title": "not results"}')
    assert main(["compare", str(stray), str(quickstart)]) == 2
    assert "not gemmcompare results: no 'results' list" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(gemmcompare.SourceError, match="holds no run"):
        gemmcompare.load(tmp_path / "empty")


def test_a_missing_store_is_told_in_python_terms(tmp_path, monkeypatch):
    import gemmcompare

    monkeypatch.chdir(tmp_path)
    with pytest.raises(gemmcompare.SourceError) as err:
        gemmcompare.load("latest")
    assert "store=PATH" in str(err.value) and "--store" not in str(err.value)
