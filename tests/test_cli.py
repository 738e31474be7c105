"""The command line as a user meets it: it answers at once (no torch, pandas or matplotlib for --help,
validate, list, cutlass list), flags mean the same in every command, every command lists its exit codes,
`report` leaves committed runs alone unless asked, `history` reads run folders, `list --resources` says it
builds (CPU only; builds stubbed)."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from gemmcompare.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "experiments" / "studies"
STARTUP_BOUND_S = 1.5  # generous: the README measures about 0.35-0.5 s; torch alone takes 2-3 s to import
HEAVY = ("torch", "pandas", "matplotlib")


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cpu_seconds(cmd: list[str], tries: int = 3) -> float:
    """The least CPU time (user + system) of a few runs of the command.

    CPU time, not wall time: it is what the command itself costs, whatever else the machine runs. CI's floor
    suite runs at nice 19 beside the newest suite, where a 0.4 s command can wait seconds for a core. The
    children's counter grows only when a child is reaped, and this test has one child at a time."""
    best = float("inf")
    for _ in range(tries):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([sys.executable, "-m", "gemmcompare", *cmd], capture_output=True, text=True, cwd=ROOT,
                              env=_env())
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert proc.returncode == 0, proc.stderr
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


@pytest.mark.parametrize("cmd", [["--help"], ["validate", "experiments/quickstart.yaml"], ["list"],
                                 ["cutlass", "list"]])
def test_quick_commands_answer_at_once(cmd):
    seconds = _cpu_seconds(cmd)
    assert seconds < STARTUP_BOUND_S, f"gemmcompare {' '.join(cmd)} took {seconds:.2f} s of CPU"


def test_quick_commands_import_no_heavy_library():
    code = ("import sys; from gemmcompare.cli import main, build_parser; build_parser().parse_args(['list']);"
            "main(['validate', 'experiments/quickstart.yaml', 'experiments/library_vs_handwritten.yaml',"
            " 'experiments/byo_kernel/byo_kernel.yaml']); main(['list']); main(['list', '--contracts']);"
            "main(['cutlass', 'list']);"
            f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "LOADED []"


def _commands(parser, prefix=""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + name, sub
                yield from _commands(sub, prefix + name + " ")


def test_a_flag_means_the_same_in_every_command():
    seen: dict[str, dict[tuple, list[str]]] = {}
    for name, sub in _commands(build_parser()):
        for a in sub._actions:
            for opt in a.option_strings:
                if opt in ("-h", "--help"):
                    continue
                sig = (type(a).__name__, getattr(a.type, "__name__", a.type), a.nargs, a.const,
                       tuple(a.choices) if a.choices else None)
                seen.setdefault(opt, {}).setdefault(sig, []).append(name)
    differing = {opt: sigs for opt, sigs in seen.items() if len(sigs) > 1}
    assert not differing, differing
    # the shared ones are where the brief expects them
    for opt, commands in (("--cache-dir", {"run", "build", "list", "sanitize", "profile", "analyze", "bisect"}),
                          ("--arch", {"run", "build", "list", "sanitize", "profile", "cutlass enumerate", "bisect"}),
                          ("--only", {"run", "build", "sanitize", "profile", "bisect"}),
                          ("--l2", {"run", "build", "profile"}), ("--contract", {"run", "build", "history"}),
                          ("--threshold", {"compare", "bisect", "dashboard"}), ("--json", {"env", "sanitize", "profile"}),
                          ("--store", {"run", "sanitize", "report", "compare", "history", "merge"})):
        found = {c for sigs in seen[opt].values() for c in sigs}
        assert found == commands, (opt, found)


def test_every_command_lists_its_exit_codes(capsys):
    parser = build_parser()
    for name, sub in _commands(parser):
        if name == "cutlass":  # a group: its subcommands answer
            continue
        text = sub.format_help()
        assert "exit codes:" in text and "  0    " in text, name
    top = parser.format_help()
    assert all(f"  {c:<4}" in top for c in (0, 1, 2, 3, 130, 141))


def test_report_of_a_committed_run_writes_outside_it_unless_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "committed"
    run.mkdir()
    for f in ("results.json", "receipt.json"):
        (run / f).write_bytes((STUDIES / "quickstart" / "h200" / f).read_bytes())
    assert main(["report", str(run), "--plots", "percent_of_baseline", "--store", str(tmp_path / "none.db")]) == 0
    assert not (run / "report").exists()
    written = list((tmp_path / "reports").glob("*/report.html"))
    assert len(written) == 1 and written[0].parent.name == "20261129-170203-e7e49b"
    assert main(["report", str(run), "--in-place", "--plots", "percent_of_baseline"]) == 0
    assert (run / "report" / "report.html").exists()
    assert main(["report", str(run), "--in-place", "--out", str(tmp_path / "x")]) == 2
    assert "not both" in capsys.readouterr().err


def _committed_names(pattern: str, problem: str | None = None) -> set[str]:
    """Implementation names matching `pattern` (re.search) in the committed H200 run folders (gzipped ones too)."""
    import re

    from gemmcompare.store.sources import run_folders
    from gemmcompare.store import load_result_file

    names = set()
    for folder in run_folders(STUDIES):
        rows = load_result_file(folder)[1]
        for name, prob in zip(rows["implementation"], rows["problem"]):
            if re.search(pattern, name) and (problem is None or prob == problem):
                names.add(name)
    return names


@pytest.mark.newest_only
def test_history_reads_committed_run_folders_by_regex(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["history", "library.cublas", "--runs", str(STUDIES), "--problem", "4096x4096x4096",
                 "--contract", "f16_f32acc_tn"]) == 0
    out = capsys.readouterr().out
    assert "history of library.cublas" in out and (tmp_path / "reports" / "history_library.cublas" / "history.png").exists()
    runs = int(out.split(" rows from ")[1].split(" runs")[0])
    assert runs >= 20  # every committed H200 run measures cuBLAS at 4096^3
    assert main(["history", "mma_sync", "--runs", str(STUDIES)]) == 2
    err = capsys.readouterr().err
    assert f"matches {len(_committed_names('mma_sync'))} implementations" in err and "narrow the regular expression" in err
    pattern = r"cutlass3x_sm90.*128x256x64_2x1x1_coop_epitma_stauto_persistent_tn_align8_rasterH_swz1$"
    assert main(["history", pattern, "--runs", str(STUDIES), "--problem", "4096x4096x4096"]) == 0
    # one per dtype pairing of the configuration the committed runs measured (f16 and bf16 in; f32 or same out)
    wanted = _committed_names(pattern, "4096x4096x4096")
    assert len(wanted) >= 2 and f"{len(wanted)} implementations" in capsys.readouterr().out
    assert main(["history", "library.cublas"]) == 2  # no --runs, no store here
    assert "--runs" in capsys.readouterr().err


def test_list_resources_says_it_builds_and_shows_full_names(monkeypatch, capsys):
    from types import SimpleNamespace

    from gemmcompare.build import extension

    def fake_build(plans, **kw):
        # every extension "built", with one kernel's resources
        return {i: SimpleNamespace(plan=p, resources_for=lambda pattern: {"registers": 168, "smem_bytes": 0,
                                                                           "spill_stores": 0, "spill_loads": 0})
                for i, p in enumerate(plans)}

    monkeypatch.setattr(extension, "build_extensions", fake_build)
    assert main(["list", "--resources", "--arch", "sm_90a", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "--resources: building" in captured.err and "cold build takes minutes" in captured.err
    assert "dynamic smem B" in captured.out
    full = [line for line in captured.out.splitlines() if "mma_sync[" in line]
    assert full and all(line.rstrip().endswith("]") for line in full)  # whole names, not cut at 48 characters
    assert any(len(line.split("  ")[-1]) > 48 for line in full)
    dynamic = [line.split()[3] for line in full]
    assert all(d.isdigit() and int(d) > 0 for d in dynamic)  # mma_sync asks for its shared memory at launch


def test_arch_is_checked_the_same_way_everywhere(capsys):
    for cmd in (["run", "experiments/quickstart.yaml"], ["cutlass", "enumerate", "--dtype", "f16"]):
        with pytest.raises(SystemExit) as info:
            main([*cmd, "--arch", "sm_9x"])
        assert info.value.code == 2
        assert "bad architecture 'sm_9x'" in capsys.readouterr().err


def test_build_without_the_bar_logs_each_extension_as_it_finishes(monkeypatch, capsys, tmp_path):
    """`gemmcompare build --no-progress` (a log file, a device script) says which extension finished when, so a
    build cut off by a time limit still shows how far it got; cached ones are not repeated there, and failures
    are named. The build is stubbed: it reports two extensions through the callback, then its outcome."""
    from types import SimpleNamespace

    from gemmcompare import cli
    from gemmcompare.build import experiment
    from gemmcompare.build.experiment import ExperimentBuilds
    from gemmcompare.build.extension import BuildFailure, LoadedExtension

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: log\nproblems: [{m: 256, n: 256, k: 256}]\ncontracts: [f16_f32acc_tn]\n"
                    "implementations:\n  - cutlass: {config: sm90_coop_128x256x64_c1x1}\n")
    built = SimpleNamespace(arch="sm_90a", module_name="gc_built")
    cached = SimpleNamespace(arch="sm_90a", module_name="gc_cached")
    broken = SimpleNamespace(arch="sm_90a", module_name="gc_broken")
    seen = {}

    def fake_build(exp, device, **options):
        seen["on_done"] = options.get("on_done")
        (impl,) = exp.implementations
        ext = LoadedExtension(None, built, [], 12.5, False, tmp_path)
        if options.get("on_done"):
            options["on_done"](built, ext)
            print("MIDDLE")  # what comes after the first extension is reported
            options["on_done"](cached, LoadedExtension(None, cached, [], 3.0, True, tmp_path))
            options["on_done"](broken, BuildFailure(broken, "error: nope", "", 4.25))
        return ExperimentBuilds(by_impl={impl.name: ext}, target_cc=90)

    monkeypatch.setattr(experiment, "build_experiment", fake_build)
    assert cli.main(["build", str(spec), "--arch", "sm_90a", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.index("built       gc_built (12.5 s)") < out.index("MIDDLE") < out.index("failed      gc_broken (4.2 s)")
    assert "gc_cached" not in out
    # with the bar, the bar is the progress: no callback
    assert cli.main(["build", str(spec), "--arch", "sm_90a"]) == 0
    assert seen["on_done"] is None


def test_analyze_help_names_the_folder_it_writes_and_every_exit_code(capsys):
    """analyze --help's default --out is the folder the command writes (issue 40: it named another)."""
    from gemmcompare.analysis import resolve_device
    from gemmcompare.cli import main
    from gemmcompare.cli.analyze import _default_out
    from gemmcompare.cli.options import load_spec

    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    exp = load_spec(str(ROOT / "experiments" / "quickstart.yaml"))
    assert f"e.g. ./{_default_out(exp, resolve_device('h200'))})" in shown
    assert "1 a kernel of the spec failed to compile" in shown
