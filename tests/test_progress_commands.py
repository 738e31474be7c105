"""Progress of the long commands (gemmcompare/progress.py): `run`, `analyze`, `report`, `compare`, `history`, `merge`,
`profile` and `sanitize` say what they are doing before any heavy import or work, then each step's line as that step ends
(a bar on a terminal; lines in a log or with --no-progress). "As it ends" is checked by looking at what stderr
held when a later step began (a stub of that step records it), never by timing."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from gemmcompare.cli import main
from gemmcompare.progress import SILENT, Progress

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART_RUN = ROOT / "experiments" / "studies" / "quickstart" / "h200"
HEAVY = ("torch", "pandas", "matplotlib")


def test_lines_off_a_terminal_a_bar_on_one_and_no_line_for_a_step_that_fails():
    log = io.StringIO()
    progress = Progress.for_command(bars=True, stream=log)  # a StringIO is no terminal: lines
    assert not progress.bars
    progress.say("doing it")
    with progress.step("first") as step:
        step.done = "first done"
    with progress.items(2, "things") as items:
        items.done("one", 1.25)
        items.done("two")
    with pytest.raises(RuntimeError):
        with progress.step("second"):
            raise RuntimeError("the step failed")
    lines = log.getvalue().splitlines()
    assert lines[0] == "doing it" and lines[1].startswith("  first done (")
    assert lines[2:] == ["  [1/2] one (1.2 s)", "  [2/2] two"]  # and nothing for the failed step

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    progress = Progress.for_command(bars=True, stream=tty)
    assert progress.bars
    with progress.items(3, "things", unit="thing") as items:
        for name in ("a", "b", "c"):
            items.done(name)
        progress.say("above the bar")
    assert "3/3" in tty.getvalue() and "[1/3]" not in tty.getvalue() and "above the bar" in tty.getvalue()
    tty = Terminal()
    progress = Progress.for_command(bars=True, stream=tty)
    with progress.items(None, "outer", unit="o") as outer:  # a count without a total
        with progress.items(2, "inner", unit="i") as inner:  # under a bar: no second bar, no lines
            inner.done("x")
        outer.done("y")
    assert "outer" in tty.getvalue() and "inner" not in tty.getvalue() and "[1/2]" not in tty.getvalue()
    assert not Progress.for_command(bars=False, stream=tty).bars  # --no-progress: lines on a terminal too

    quiet = io.StringIO()
    silent = Progress(silent=True, stream=quiet)  # what SILENT is: the API's and `run`'s report say nothing
    silent.say("x")
    with silent.step("x"), silent.items(2, "y") as items:
        items.done("z")
    assert quiet.getvalue() == "" and SILENT.silent


# -- the first line, before any heavy import --------------------------------------------------------------

FIRST_LINE = """
import json, os, sys
from gemmcompare import device
from gemmcompare.profilers import tools
tools.find_tool = lambda name: "/bin/true"  # profile and sanitize: as if the tool were installed
device.probe_device = lambda index=0: device.DeviceInfo("Fake H200", (9, 0), 132, 60 << 20, 141 << 30, 0)

class FirstLine:
    def write(self, text):
        heavy = [m for m in {heavy!r} if m in sys.modules]
        sys.__stdout__.write(json.dumps({{"line": text, "heavy": heavy}}) + "\\n")
        sys.__stdout__.flush()
        os._exit(0)  # the command's first word is all this test wants
    def flush(self):
        pass
    def isatty(self):
        return False

sys.stderr = FirstLine()
from gemmcompare.cli import main
main({argv!r})
"""


@pytest.mark.parametrize("argv, starts", [
    (["analyze", "experiments/quickstart.yaml", "--device", "h200"], "analyze experiments/quickstart.yaml for h200"),
    (["report", str(QUICKSTART_RUN)], f"report {QUICKSTART_RUN}: loading the run"),
    (["compare", str(QUICKSTART_RUN), str(QUICKSTART_RUN)], f"compare {QUICKSTART_RUN} -> "),
    (["merge", "out", str(QUICKSTART_RUN)], "merge 1 source(s) into out"),
    (["history", "cublas", "--runs", str(QUICKSTART_RUN)], f"history cublas: reading every run of {QUICKSTART_RUN}"),
    (["dashboard", str(QUICKSTART_RUN), "--out", "/nonexistent/site"], f"dashboard {QUICKSTART_RUN}: every run found read"),
    (["profile", "experiments/quickstart.yaml"], "profile experiments/quickstart.yaml on Fake H200"),
    (["sanitize", "experiments/quickstart.yaml"], "sanitize experiments/quickstart.yaml on Fake H200"),
])
def test_the_first_line_says_what_the_command_does_before_any_heavy_import(argv, starts, tmp_path):
    """In a fresh interpreter (this one has imported everything already): the first thing written to stderr is
    the command's own line, written while torch, pandas and matplotlib are still unimported."""
    script = FIRST_LINE.format(heavy=HEAVY, argv=argv)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout, out.stderr
    first = json.loads(out.stdout.splitlines()[0])
    assert first["line"].startswith(starts), first
    assert first["heavy"] == [], first


# -- each step's line as the step ends ----------------------------------------------------------------------

class Seen:
    """What stderr held when each stubbed step began (capsys hands out what is new since the last look)."""

    def __init__(self, capsys):
        self.capsys, self.err, self.at = capsys, "", {}

    def mark(self, name: str) -> str:
        self.err += self.capsys.readouterr().err
        self.at[name] = self.err
        return self.err


def _spec(tmp_path, implementations: str) -> Path:
    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nproblems: [{m: 256, n: 256, k: 256}, {m: 512, n: 512, k: 512}]\n"
                    f"contracts: [f16_f32acc_tn]\nimplementations: {implementations}\n")
    return spec


def test_analyze_says_each_compile_as_it_finishes_and_each_step_as_it_ends(tmp_path, monkeypatch, capsys):
    from gemmcompare import analysis
    from gemmcompare.build import kernel_objects

    spec = _spec(tmp_path, "[library.cublas, lab.wmma_global, lab.wmma_padded]")
    seen = Seen(capsys)

    def compiled(req, cache_dir=None):  # as if nvcc had run: an object per kernel TU, no kernel resources
        objects = [tmp_path / "k.o"] if any(s.filename.endswith(".cu") for s in req.sources) else []
        return kernel_objects.KernelObjects(req, tmp_path, objects, [], 12.5, False)

    def report(result, exp, out, progress):
        seen.mark("report")
        raise analysis.UnknownDevice("stop here")  # a later step fails: what came before was already said

    monkeypatch.setattr(kernel_objects, "compile_request", compiled)
    monkeypatch.setattr(analysis, "write_report", report)
    seen.mark("start")
    assert main(["analyze", str(spec), "--device", "h200", "--jobs", "1", "--no-progress"]) == 2
    seen.mark("end")
    before_report = seen.at["report"]
    first, *rest = before_report.splitlines()
    assert first.startswith(f"analyze {spec} for h200:")
    assert rest[0].startswith("  read 't': 2 problems x 1 contracts x 3 implementations, for NVIDIA H200")
    assert rest[1].startswith("  planned 6 rows; 3 implementation(s) to compile")
    done = [line for line in rest if line.startswith("  [")]
    assert len(done) == 3 and any("lab.wmma_padded: compiled for sm_90" in line and line.endswith("(12.5 s)")
                                  for line in done)
    assert any("cublas: no kernel source of its own" in line for line in done)
    assert any(line.startswith("  kernels of 3 implementation(s): 2 compiled, 1 nothing to compile") for line in rest)
    assert rest[-1].startswith("  predicted ")  # the last step before the report
    assert "wrote the report" not in seen.err and "stop here" in seen.err


def test_compile_requests_reports_each_result_while_the_others_still_compile(monkeypatch):
    """The second compile waits until the first one has been reported: on_done cannot be waiting for the end."""
    from gemmcompare.build import kernel_objects

    reported = threading.Event()
    order = []

    def compiled(req, cache_dir=None):
        if req == "second":
            assert reported.wait(30), "the first result was not reported while the second compiled"
        order.append(req)
        return req

    monkeypatch.setattr(kernel_objects, "compile_request", compiled)
    results = kernel_objects.compile_requests(["first", "second"], jobs=2,
                                              on_done=lambda r: (order.append(f"reported {r}"), reported.set()))
    assert results == ["first", "second"]
    assert order.index("reported first") < order.index("second")


def test_report_says_the_load_each_plot_kind_and_the_pages_as_each_ends(tmp_path, monkeypatch, capsys):
    from gemmcompare.cli import report as cli_report
    from gemmcompare.report import build

    seen = Seen(capsys)
    load = cli_report.load_source
    monkeypatch.setattr(cli_report, "load_source", lambda *a: (seen.mark("load"), load(*a))[1])
    html_page = build._html_page

    def page(*a):
        seen.mark("html")
        return html_page(*a)

    monkeypatch.setattr(build, "_html_page", page)
    out = tmp_path / "r"
    assert main(["report", str(QUICKSTART_RUN), "--out", str(out), "--plots", "throughput_vs_size",
                 "percent_of_baseline", "--store", str(tmp_path / "none.db"), "--no-progress"]) == 0
    seen.mark("end")
    assert seen.at["load"].splitlines() == [f"report {QUICKSTART_RUN}: loading the run, then its summary, plots "
                                            f"and pages"]  # said before the run is read
    lines = seen.at["html"].splitlines()[1:]
    assert lines[0].startswith("  loaded 12 rows of 20261129-170203-e7e49b") and f"writing into {out}" in lines[0]
    assert lines[1].startswith("  summary of 12 rows (")
    assert lines[2].startswith("  [1/2] throughput_vs_size: 2 figure(s) drawn (")
    assert lines[3].startswith("  [2/2] percent_of_baseline: 2 figure(s) drawn (")
    assert lines[4].startswith("  drew 4 figure(s) (") and lines[5].startswith("  wrote report.md and summary.csv")
    saved = [line for line in lines if line.startswith("  saved ") and ".png/.svg" in line]
    if saved:  # figures saved on the pool: each said as it is written, all before the page
        assert len(saved) == 4 and lines[-1].startswith("  saved 4 figure(s) (")
    assert seen.err.splitlines()[-1].startswith(f"  wrote {out / 'report.html'}")
    assert (out / "report.html").exists()


def test_compare_says_each_run_loaded_and_the_verdicts_before_it_draws(tmp_path, monkeypatch, capsys):
    from gemmcompare import verdicts

    seen = Seen(capsys)
    monkeypatch.setattr(verdicts, "plot_ratios", lambda comp, out: (seen.mark("plot"), ([], ""))[1])
    rc = main(["compare", str(QUICKSTART_RUN), str(QUICKSTART_RUN), "--out", str(tmp_path / "c"),
               "--store", str(tmp_path / "none.db"), "--no-progress"])
    assert rc == 0
    seen.mark("end")
    before = seen.at["plot"].splitlines()
    assert before[0].startswith(f"compare {QUICKSTART_RUN} -> {QUICKSTART_RUN}:")
    assert [line.split(" (")[0] for line in before[1:]] == [
        "  loaded 12 rows of 20261129-170203-e7e49b", "  loaded 12 rows of 20261129-170203-e7e49b",
        "  judged 12 rows"]
    after = seen.err.splitlines()[len(before):]
    assert after[0].startswith("  drew no plot") and after[1].startswith("  wrote compare.csv, compare.md, compare.html")


def _halves(tmp_path) -> list[Path]:
    """The committed quickstart run as two run folders of half its rows each (one spec, no row twice)."""
    data = json.loads((QUICKSTART_RUN / "results.json").read_text())
    folders = []
    for i in range(2):
        folder = tmp_path / f"half{i}"
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps({"receipt": data["receipt"],
                                                         "results": data["results"][i::2]}))
        folders.append(folder)
    return folders


def test_merge_says_each_source_read_before_checking_and_each_run_written(tmp_path, monkeypatch, capsys):
    from gemmcompare.store import merge

    seen = Seen(capsys)
    check = merge.check
    monkeypatch.setattr(merge, "check", lambda *a: (seen.mark("check"), check(*a))[1])
    folders = _halves(tmp_path)
    assert main(["merge", str(tmp_path / "merged"), *map(str, folders), "--store", str(tmp_path / "m.db"),
                 "--no-progress"]) == 0
    seen.mark("end")
    before = seen.at["check"].splitlines()
    assert before[0] == f"merge 2 source(s) into {tmp_path / 'merged'}: each read, checked as one run, then written"
    assert before[1].startswith(f"  [1/2] read {folders[0]}: 1 run(s), 6 rows (")
    assert before[2].startswith(f"  [2/2] read {folders[1]}: 1 run(s), 6 rows (")
    after = seen.err.splitlines()[len(before):]
    assert after[0].startswith("  checked: 2 run(s) of one spec, no row twice (")
    assert after[1].startswith(f"  [1/2] wrote 6 rows of {folders[0]}") and after[2].startswith("  [2/2] wrote 6 rows")


# -- profile and sanitize: the GPU path, with fakes ----------------------------------------------------------

def _fake_gpu(monkeypatch, tmp_path, seen: Seen) -> None:
    """A GPU and the tools, and a build that reports one extension built and one cached."""
    from gemmcompare import device
    from gemmcompare.build import experiment
    from gemmcompare.build.experiment import ExperimentBuilds
    from gemmcompare.build.extension import LoadedExtension
    from gemmcompare.profilers import tools

    monkeypatch.setattr(tools, "find_tool", lambda name: f"/opt/{name}")
    monkeypatch.setattr(device, "probe_device",
                        lambda index=0: device.DeviceInfo("Fake H200", (9, 0), 132, 60 << 20, 141 << 30, 0))

    def build(exp, dev, *, progress, on_done, **options):
        seen.mark("build")
        seen.build_options = options
        for name, cached in (("gc_built", False), ("gc_cached", True)):
            plan = types.SimpleNamespace(module_name=name)
            on_done(plan, LoadedExtension(None, plan, [], 20.0, cached, tmp_path))
        return ExperimentBuilds()

    monkeypatch.setattr(experiment, "build_experiment", build)


def test_profile_says_the_build_and_each_row_as_it_is_profiled(tmp_path, monkeypatch, capsys):
    from gemmcompare.profilers import ncu

    seen = Seen(capsys)
    _fake_gpu(monkeypatch, tmp_path, seen)
    rows = []

    def timing(ncu_path, spec, impl, problem, contract, *rest, **kw):
        seen.mark(f"row {len(rows)}")
        rows.append(impl)
        return {"ncu_median_ms": 0.5}

    monkeypatch.setattr(ncu, "timing_profile", timing)
    spec = _spec(tmp_path, "[library.cublas, library.torch_matmul]")
    assert main(["profile", str(spec), "--no-progress"]) == 0
    seen.mark("end")
    assert len(rows) == 4
    assert seen.at["build"].splitlines() == [f"profile {spec} on Fake H200: the extensions built, then 4 row(s) each "
                                             f"timed and profiled under ncu in processes of their own"]
    row0 = seen.at["row 0"].splitlines()  # the build said, cached extensions only counted
    assert len(row0) == 3 and row0[1] == "  built gc_built (20.0 s)"
    assert row0[2].startswith("  extensions: 1 built, 1 cached (")
    row1 = seen.at["row 1"].splitlines()
    assert row1[3].startswith("  [1/4] 256x256x256 f16_f32acc_tn library.cublas: ncu 0.50000 ms (")
    assert seen.err.splitlines()[-1].startswith("  [4/4] 512x512x512")
    assert seen.build_options["merge"] is False  # what the driver processes build (next test)


def test_profile_builds_each_implementation_as_its_driver_process_will(monkeypatch):
    """The driver of a row builds its one implementation (driver._prepare): the command's build step builds
    those same extensions, not the run's merged ones, or every driver would build again."""
    from gemmcompare.build import experiment
    from gemmcompare.device import DeviceInfo
    from gemmcompare.plan import make_plan, narrow
    from gemmcompare.spec import load_spec

    # nothing compiled: each implementation's result is the name of the extension it would be built into
    monkeypatch.setattr(experiment, "build_extensions", lambda plans, **kw: {p.module_name: p.module_name for p in plans})
    h200 = DeviceInfo("Fake H200", (9, 0), 132, 60 << 20, 141 << 30, 0)
    exp = load_spec(ROOT / "experiments" / "lab_ladder.yaml")
    merged = experiment.build_experiment(exp, h200, progress=False)
    alone = experiment.build_experiment(exp, h200, progress=False, merge=False)
    assert len(set(merged.by_impl.values())) < len(set(alone.by_impl.values()))  # the ladder's rungs share extensions
    cells = {c.implementation.name: c for c in reversed(make_plan(exp).cells) if c.support}  # a row of each
    assert set(cells) == set(alone.by_impl)
    for name, module in alone.by_impl.items():
        one = narrow(exp, cells[name].entry.problem.label, False, f"^{re.escape(name)}$")  # as driver._prepare
        assert experiment.build_experiment(one, h200, progress=False).by_impl[name] == module, name


def test_sanitize_says_the_build_and_each_tool_as_it_finishes(tmp_path, monkeypatch, capsys):
    from gemmcompare.profilers import sanitizer

    seen = Seen(capsys)
    _fake_gpu(monkeypatch, tmp_path, seen)
    commands = []

    def tool_run(cmd, **kw):
        seen.mark(cmd[2])
        commands.append(cmd)
        return types.SimpleNamespace(stdout="========= ERROR SUMMARY: 0 errors\n", stderr="", returncode=0)

    monkeypatch.setattr(sanitizer.subprocess, "run", tool_run)
    spec = _spec(tmp_path, "[library.cublas]")
    cache = tmp_path / "cache"
    assert main(["sanitize", str(spec), "--tools", "memcheck,racecheck", "--cache-dir", str(cache),
                 "--no-progress"]) == 0
    seen.mark("end")
    assert seen.at["build"].splitlines()[0].startswith(f"sanitize {spec} on Fake H200: the extensions built, then "
                                                       f"memcheck, racecheck")
    racecheck = seen.at["racecheck"]
    assert "  built gc_built (20.0 s)" in racecheck and "  extensions: 1 built, 1 cached" in racecheck
    assert "  [1/2] memcheck: 0 error(s) (" in racecheck  # said before the next tool started
    assert "  [2/2] racecheck: 0 error(s)" in seen.err
    assert all(cmd[cmd.index("--cache-dir") + 1] == str(cache) for cmd in commands)  # the cache built into


@pytest.mark.parametrize("command", ["profile", "sanitize"])
def test_without_a_gpu_profile_and_sanitize_stop_before_building(command, tmp_path, monkeypatch, capsys):
    from gemmcompare import device
    from gemmcompare.build import experiment
    from gemmcompare.profilers import tools

    monkeypatch.setattr(tools, "find_tool", lambda name: f"/opt/{name}")
    monkeypatch.setattr(device, "probe_device", lambda index=0: None)
    monkeypatch.setattr(experiment, "build_experiment", lambda *a, **kw: pytest.fail("built without a GPU"))
    assert main([command, str(ROOT / "experiments" / "quickstart.yaml"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "there is no CUDA device here" in err and len(err.splitlines()) == 1
    # and without the tool, the tool is named (exit 1), also before any build
    monkeypatch.setattr(tools, "find_tool", lambda name: (_ for _ in ()).throw(
        tools.ToolchainError(f"{name} not found on PATH or in the CUDA toolkit")))
    assert main([command, str(ROOT / "experiments" / "quickstart.yaml")]) == 1
    assert "not found on PATH" in capsys.readouterr().err


# -- run: its first line at once, then each extension built and each row measured (fake GPU) --------------

def test_run_says_what_it_does_then_each_build_and_row_as_it_ends(tmp_path, monkeypatch, capsys):
    """`run --no-progress` (or a log): the run's own line before the build, a line per extension as it is built,
    and one per row as it is stored, each seen before the next step began."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fake_device

    from gemmcompare.cli import run as cli_run
    from gemmcompare.runner import parent

    seen = Seen(capsys)
    spec = tmp_path / "r.yaml"
    spec.write_text("name: r\nproblems: [{m: 256, n: 256, k: 256}, {m: 512, n: 512, k: 512}]\n"
                    "contracts: [f16_f32acc_tn]\nimplementations: [library.cublas, library.torch_matmul]\n"
                    "baseline: library.cublas\ntiming: {row_timeout_s: 5}\n")

    def build_experiment(exp, device, on_done=None, **kw):  # the real build_in_steps around a fake build
        seen.mark("build")
        from gemmcompare.build.extension import ExtensionPlan  # noqa: F401  (the plans' type, for on_done)

        builds = fake_device.fake_builds(exp)
        plan = types.SimpleNamespace(module_name="gc_fake_ext")
        on_done(plan, types.SimpleNamespace(cache_hit=False, build_seconds=1.5))
        seen.mark("after one extension")
        return builds

    monkeypatch.setattr("gemmcompare.build.experiment.build_experiment", build_experiment)
    real_options = cli_run.run_options
    monkeypatch.setattr(cli_run, "run_options", lambda args: __import__("dataclasses").replace(
        real_options(args), backend=fake_device.BACKEND, silence_margin_s=5.0))
    real_emit = parent.Runner._emit

    def emit(self, row):
        seen.mark(f"row {len(self.rows) + 1}")
        real_emit(self, row)

    class FakeHostRunner(parent.Runner):
        def __init__(self, exp, opts, **kw):
            super().__init__(exp, opts, device=fake_device.DEVICE, gpus=fake_device.GPUS[:1], **kw)

    monkeypatch.setattr(parent.Runner, "_emit", emit)
    monkeypatch.setattr(parent, "Runner", FakeHostRunner)
    code = main(["run", str(spec), "--store", str(tmp_path / "g.db"), "--runs-dir", str(tmp_path / "runs"),
                 "--no-progress", "--no-report"])
    seen.mark("end")
    assert code == 0, seen.err
    assert seen.at["build"].startswith(f"run {spec}: 'r', 4 rows: its kernels built"), seen.at["build"]
    assert "built gc_fake_ext (1.5 s)" in seen.at["after one extension"]
    assert "extensions: 1 built" in seen.at["row 1"]
    assert re.search(r"\[1/4\] 256x256x256 f16_f32acc_tn library\.\w+: PASS [0-9.]+ ms", seen.at["row 2"]), seen.at["row 2"]
    assert len(re.findall(r"\[\d/4\] ", seen.at["end"])) == 4


def test_a_runs_first_line_comes_before_torch_is_imported(tmp_path):
    """Without a GPU the run builds, then exits 3: its first line is written before anything heavy loads."""
    script = FIRST_LINE.format(heavy=HEAVY, argv=["run", "experiments/quickstart.yaml", "--no-progress",
                                                   "--cache-dir", str(tmp_path / "cache"), "--store",
                                                   str(tmp_path / "g.db"), "--runs-dir", str(tmp_path / "runs")])
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    first = json.loads(out.stdout.splitlines()[0])
    assert first["line"].startswith("run experiments/quickstart.yaml: 'quickstart', 12 rows"), first
    assert first["heavy"] == [], first
