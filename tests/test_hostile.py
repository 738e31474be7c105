"""Hostile and broken inputs (issue 20): no shell, bounded memory and time, exit 2 with a message that names
what is wrong, and nothing written by a read. One section per class of docs/bad_input.md."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from gemmcompare.build import extension
from gemmcompare.build.cache_entry import damage, entry_files, seal
from gemmcompare.build.flags import check_flag
from gemmcompare.cli import main
from gemmcompare.arch import parse_arch
from gemmcompare.errors import SpecError
from gemmcompare.limits import MAX_PROBLEMS, MAX_SPEC_BYTES
from gemmcompare.spec import parse_spec
from gemmcompare.store import Store
from test_report import make_rows, receipt_for, store_run

ROOT = Path(__file__).resolve().parents[1]
BYO = ROOT / "experiments" / "byo_kernel"
HEAD = "name: t\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [f16_f32acc_tn]\n"
SPEC = HEAD + "implementations: [library.cublas]\n"


def issues(text: str, base_dir: Path = BYO) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(text, "t.yaml", base_dir=base_dir)
    return "\n".join(str(p) for p in info.value.problems)


def run_cli(argv, capsys) -> tuple[int, str]:
    """main(argv) -> (exit code, stderr); argparse's own errors exit through SystemExit."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    return rc, capsys.readouterr().err


def snapshot(folder: Path) -> dict:
    """Every path under folder with its size, mtime and digest: equal snapshots mean nothing was written."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns, digest)
    return out


def custom(entry: str) -> str:
    return HEAD + f"implementations:\n  - custom: {entry}\n"


# -- a spec cannot run commands ---------------------------------------------------------------------------------

HOSTILE_FLAGS = [
    "-DX=1;/path/to/script", "-DX=`touch pwned`", "-DX=$(touch pwned)", "-DX=a|b", "-DX=a,b", "-D1X=2",
    "-run", "--run", "-Xcompiler -fplugin=p.so", "-Xcompiler=-fplugin=p.so", "-Xcompiler=-I/",
    "--compiler-options=-o/tmp/x", "--keep", "--keep-dir=/tmp/k", "--options-file=/tmp/f", "-optf=/tmp/f",
    "-G", "-Xlinker=-rpath=/x", "--pre-include=/etc/passwd", "-include=x.h", "-L/tmp", "-lfoo", "-rdc=true",
    "-Xptxas=--foo", "-Xptxas=-v,--output-file=/tmp/x", "-Xptxas", "-O9", "-maxrregcount=1;x", "--dryrun",
    "-ccbin=/tmp/evil",
]


@pytest.mark.parametrize("flag", HOSTILE_FLAGS)
def test_flags_outside_the_allow_list_are_refused_naming_the_flag(flag):
    why = check_flag(flag)
    assert why and repr(flag) in why
    msg = issues(custom(f"{{name: x, sources: [my_gemm.cu], flags: [{json.dumps(flag)}]}}"))
    assert repr(flag) in msg and "t.yaml:5" in msg


@pytest.mark.parametrize("flag", ["-DTILE_K=16", "-DUSE_X", "-DSCALE=0.5f", "-DNEG=-1", "-UFOO", "-O0", "-O3",
                                  "-lineinfo", "--use_fast_math", "--ftz=true", "-maxrregcount=128",
                                  "-Xptxas=-v", "-Xptxas=-v,-dlcm=ca,-warn-spills", "--ptxas-options=-O2",
                                  "--extra-device-vectorization", "-std=c++20", "--diag-suppress=177,550",
                                  "--expt-relaxed-constexpr", "-Wno-deprecated-gpu-targets"])
def test_flags_a_kernel_author_needs_are_allowed(flag):
    assert check_flag(flag) is None


FAKE_TOOL = """\
#!{python}
# Stands in for nvcc and c++: records its arguments, writes the files the build expects.
import json, sys
args = sys.argv[1:]
if "--version" in args or "-v" in args or "-dumpfullversion" in args:
    print("gcc version 12.2.0 (fake)\\nCuda compilation tools, release 13.0, V13.0.0\\n12.2.0")
    sys.exit(0)
with open({log!r}, "a") as f:
    f.write(json.dumps({{"tool": sys.argv[0], "args": args}}) + "\\n")
for flag in ("-o", "--dependency-output", "-MF"):
    if flag in args:
        out = args[args.index(flag) + 1]
        open(out, "w").write("x.o: \\n" if out.endswith(".d") else "not a real object")
"""


def test_flags_reach_nvcc_as_single_arguments_through_ninja_and_the_shell(tmp_path):
    """torch writes flags into build.ninja and ninja runs commands through /bin/sh: every flag must reach
    nvcc as the one argument it was, and no shell may run any part of it (a fake toolchain records argv)."""
    cuda, log, marks = tmp_path / "cuda", tmp_path / "calls.jsonl", tmp_path / "marks"
    (cuda / "bin").mkdir(parents=True)
    (cuda / "include").mkdir()
    (cuda / "include" / "cuda_runtime.h").write_text("")
    marks.mkdir()
    for tool in (cuda / "bin" / "nvcc", tmp_path / "cxx"):
        tool.write_text(FAKE_TOOL.format(python=sys.executable, log=str(log)))
        tool.chmod(0o755)
    hostile = [f"-DA=1;touch {marks}/a", f"-DB=`touch {marks}/b`", f"-DC=$(touch {marks}/c)",
               "-DD=$HOME", "-DE='quoted'", "-DF=a&&b", "-DG=#hash"]
    script = textwrap.dedent(f"""
        from gemmcompare.build import extension
        from gemmcompare.build.binding import EntryPoint
        from gemmcompare.build.request import KernelSource
        plan = extension.ExtensionPlan("t", "sm_80", [KernelSource("k.cu", text="// kernel")], [EntryPoint("f", False)],
                                       {tuple(hostile)!r}, (), False)
        plan._key = "0" * 64  # the key hashes versions of real tools; this plan never reaches the cache
        out = extension._build_in_process(extension._plan_payload(plan), {str(tmp_path / 'cache')!r}, 1)
        print("ok" if out.ok else "failed as expected: the fake .so cannot load")
    """)
    env = dict(os.environ, CUDA_HOME=str(cuda), CXX=str(tmp_path / "cxx"), PYTHONPATH=str(ROOT))
    env.pop("CUDA_PATH", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    nvcc = [c["args"] for c in calls if c["tool"].endswith("nvcc")]
    assert nvcc, done.stdout + done.stderr
    for flag in hostile:
        assert flag in nvcc[0], (flag, nvcc[0])
    assert not list(marks.iterdir()), "a shell ran part of a flag"


def test_arch_must_be_sm_xy(capsys, tmp_path):
    for bad in ("sm_90;rm", "sm_90 ", "sm_80\n", "sm_9", "sm_90b", "compute_90", "$(id)"):
        with pytest.raises(ValueError):
            parse_arch(bad)
    assert parse_arch("sm_90a") == (90, True) and parse_arch("100") == (100, False)
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    for command in ("build", "run", "list"):
        args = [command] + ([spec] if command != "list" else ["--resources"]) + ["--arch", "sm_90;rm"]
        rc, err = run_cli(args, capsys)
        assert rc == 2 and "--arch" in err and "sm_90;rm" in err
    assert "sm_XY" in issues(custom("{name: x, sources: [my_gemm.cu], arch: 'sm_80;id'}"))


def test_paths_the_build_file_cannot_carry_are_refused(tmp_path):
    folder = tmp_path / "a$HOME"
    folder.mkdir()
    (folder / "k.cu").write_text("void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, "
                                 "size_t k, cudaStream_t s) {}\n")
    assert "'$'" in issues(custom(f"{{name: x, sources: ['{folder / 'k.cu'}']}}"), tmp_path)


# -- memory and time are bounded --------------------------------------------------------------------------------

def alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n" + SPEC


def test_alias_expansion_is_bounded():
    assert "MAX_VALUES" in issues(alias_bomb(6))  # 531,441 values from 7 lines


def test_problems_are_counted_over_every_sweep_before_expanding():
    per = MAX_PROBLEMS // 10 + 1
    sweeps = "".join(f"  - sweep: {{m: {{range: [1, {per}]}}, n: {i + 1}, k: 8}}\n" for i in range(10))
    msg = issues("name: t\nproblems:\n" + sweeps + "contracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n")
    assert "MAX_PROBLEMS" in msg


def test_parameter_sweeps_are_counted_before_expanding():
    values = ", ".join(str(v) for v in range(1, 41))
    msg = issues(HEAD + f"implementations:\n  - mma_sync: {{stages: [{values}], group: [{values}]}}\n")
    assert "MAX_IMPLEMENTATIONS" in msg and "1,600 implementations" in msg


def test_the_whole_plan_is_capped():
    msg = issues("name: t\nproblems: [{sweep: {m: {range: [1, 9000]}, n: 8, k: 8}}]\n"
                 "contracts: [f16_f32acc_tn, f32_strict_tn]\n"
                 "implementations: [library.cublas, library.torch_matmul, lab.wmma_staged, mma_sync, "
                 "{mma_sync: {stages: [2, 4]}}]\n")
    assert "MAX_ROWS" in msg and "108,000 rows" in msg


def test_spec_size_is_bounded_before_parsing(tmp_path, capsys):
    spec = tmp_path / "big.yaml"
    spec.write_text("# " + "x" * MAX_SPEC_BYTES + "\n" + SPEC)  # a valid spec behind a long comment
    rc, err = run_cli(["validate", spec], capsys)
    assert rc == 2 and "MAX_SPEC_BYTES" in err


def test_a_custom_source_is_read_within_bounds(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, "
                   "cudaStream_t s) {}\n")
    with open(src, "r+b") as f:
        f.truncate(17 * 2**20)  # sparse: costs no disk
    assert "MAX_SOURCE_BYTES" in issues(custom("{name: x, sources: [k.cu]}"), tmp_path)


ADVERSARIAL = {
    "alias_bomb": (alias_bomb(9), "MAX_VALUES"),
    "range": ("name: t\nproblems: [{sweep: {m: {range: [1, 2147483647]}, n: 8, k: 8}}]\n"
              "contracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n", "MAX_PROBLEMS"),
    "twenty_sweeps": ("name: t\nproblems:\n" + "".join(f"  - sweep: {{m: {{range: [1, 99999]}}, n: {i + 1}, k: 8}}\n"
                                                      for i in range(20))
                      + "contracts: [f16_f32acc_tn]\nimplementations: [library.cublas]\n", "MAX_PROBLEMS"),
    "deep": ("x: " + "[" * 100_000 + "]" * 100_000 + "\n" + SPEC, "MAX_NESTING"),
    "flat": ("x: [" + ",".join(["1"] * 120_000) + "]\n" + SPEC, "MAX_VALUES"),
    "params": (HEAD + "implementations:\n  - mma_sync: {" + ", ".join(
        f"{k}: [{', '.join(str(v) for v in range(1, 30))}]" for k in ("stages", "group", "warps")) + "}\n",
        "MAX_IMPLEMENTATIONS"),
    "huge": ("# " + "x" * 50 * 2**20 + "\n" + SPEC, "MAX_SPEC_BYTES"),
}

MEASURE = """
import json, resource, runpy, sys, time
t0 = time.time()
sys.argv = ["gemmcompare", "validate", *sys.argv[2:]]
code = 1
try:
    runpy.run_module("gemmcompare", run_name="__main__")
except SystemExit as exc:
    code = exc.code
finally:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    # This process's own peak: VmHWM belongs to the memory map made at exec. ru_maxrss does not: Linux carries
    # the forking parent's peak across fork and exec (preexec_fn forces a fork), so it read pytest's ~1 GB late
    # in a full run, not validate's.
    hwm_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    with open(STATS, "w") as f:
        json.dump({"rss_mib": hwm_kib / 1024, "cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": time.time() - t0}, f)
sys.exit(code)
"""


def _names_the_limit(message: str, limit_name: str) -> bool:
    """The promise is that the message says what was too much. For nesting, the YAML library may refuse
    first (PyYAML 6.0.4's libyaml stops at 1,000 levels, in its own words): either wording keeps it."""
    if limit_name == "MAX_NESTING":
        return "MAX_NESTING" in message or "nesting" in message.lower()
    return limit_name in message


def test_validate_of_adversarial_specs_stays_within_1gb_and_10s(tmp_path):
    """`validate` of any spec stays under 1 GB and 10 s, or exits 2 naming the limit it hit. All of them in one
    process (they must fit together), under a data-size limit of 1.5 GB so that a failure is a MemoryError
    here and not a machine swapping. (RLIMIT_AS cannot be used: importing torch maps 3 GB of address space.)"""
    import resource

    paths = []
    for name, (text, _) in ADVERSARIAL.items():
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_text(text)
    paths.append(Path("/dev/zero"))  # an endless file
    stats = tmp_path / "stats.json"

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (1536 * 2**20, 1536 * 2**20))

    done = subprocess.run([sys.executable, "-c", MEASURE.replace("STATS", repr(str(stats))), "x", *map(str, paths)],
                          preexec_fn=limit, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    for path, (name, (_, limit_name)) in zip(paths, ADVERSARIAL.items()):
        block = done.stderr.split(f"INVALID {path}:")[1].split("INVALID")[0]
        assert _names_the_limit(block, limit_name), (name, block[:500])
    assert "INVALID /dev/zero" in done.stderr
    used = json.loads(stats.read_text())
    assert used["rss_mib"] < 1024, used
    assert used["cpu_s"] < 10, used  # CPU time: the wall clock of a shared machine also counts its neighbours


# -- tracebacks become messages ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("x: " + "[" * 2000 + "]" * 2000 + "\n" + SPEC, "MAX_NESTING"),
    ("a: &a [*a]\n" + SPEC, "recursive alias"),
    ("a: &a {b: *a}\n" + SPEC, "recursive alias"),
    ("name: t\x00\n", "U+0000"),
    ('name: "t"\ndescription: "\x1b[31mred"\n', "U+001B"),
    ("name: t\nproblems: [{m: " + "1" * 5001 + ", n: 8, k: 8}]\n", "5,001 digits"),
    ("name: t\n? " + "1" * 5001 + "\n: x\n", "5,001 digits"),
    ("? [a, b]\n: 1\n" + SPEC, "keys must be names"),
], ids=["deep", "recursive-list", "recursive-map", "nul", "esc", "digits-value", "digits-key", "list-key"])
def test_unreadable_yaml_is_a_message_with_the_line(text, expected, tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    rc, err = run_cli(["validate", spec], capsys)
    assert rc == 2 and _names_the_limit(err, expected) and "Traceback" not in err
    assert re.search(re.escape(str(spec)) + r":\d+: ", err), err  # the file and the line


def test_bytes_that_are_not_utf8(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_bytes(b"name: t\nx: \xff\xfe\n")
    rc, err = run_cli(["validate", spec], capsys)
    assert rc == 2 and "not UTF-8" in err and f"{spec}:2" in err


def test_bad_only_and_shapes_exit_2(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    for extra in (["--only", "(["], ["--shapes", "8x8"], ["--shapes", "9" * 5001 + "x8x8"], ["--shapes", "0x8x8"]):
        rc, err = run_cli(["run", spec, "--store", tmp_path / "g.db", *extra], capsys)
        assert rc == 2 and ("--only" in err or "--shapes" in err)
    assert not (tmp_path / "g.db").exists()


def test_control_characters_in_values_are_escaped_in_messages(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(HEAD + 'implementations:\n  - custom: {name: x, sources: ["\\e[2J.cu"]}\n')  # YAML's \e: ESC
    rc, err = run_cli(["validate", spec], capsys)
    assert rc == 2 and "\x1b" not in err and "\\x1b[2J.cu" in err  # a terminal is not told to clear itself


def test_a_run_folder_that_cannot_be_continued(tmp_path):
    from gemmcompare.errors import InputError
    from gemmcompare.store import RunFolder

    (tmp_path / "results.json").write_text("[1]")
    with pytest.raises(InputError, match="cannot continue"):
        RunFolder(tmp_path)


def make_store(path: Path, runs=("20250101-000000-aaaaaa",)) -> Path:
    store = Store(path)
    for run_id in runs:
        store_run(store, run_id, make_rows(run_id, problems=((1024,) * 3,), sweep=False))
    store.close()
    return path


def broken_stores(tmp_path: Path) -> dict[str, Path]:
    tmp_path.mkdir()
    out = {}
    (tmp_path / "random.db").write_bytes(os.urandom(4096))
    out["random bytes"] = tmp_path / "random.db"
    (tmp_path / "empty.db").write_bytes(b"")
    out["empty"] = tmp_path / "empty.db"
    good = make_store(tmp_path / "good.db").read_bytes()
    (tmp_path / "malformed.db").write_bytes(good[:100] + os.urandom(len(good) - 100))
    out["malformed"] = tmp_path / "malformed.db"
    (tmp_path / "folder.db").mkdir()
    out["a folder"] = tmp_path / "folder.db"
    for name, sql in (("no_results", "DROP TABLE results"), ("no_status", "ALTER TABLE results DROP COLUMN status"),
                      ("no_started_at", "ALTER TABLE runs DROP COLUMN started_at")):
        path = make_store(tmp_path / f"{name}.db")
        conn = sqlite3.connect(path)
        conn.execute(sql)
        conn.commit()
        conn.close()
        out[name] = path
    (tmp_path / "good.db").unlink()
    return out


@pytest.mark.parametrize("command", ["report", "history", "compare"])
def test_a_broken_store_is_a_message_and_is_left_as_it_was(command, tmp_path, capsys, monkeypatch):
    stores = broken_stores(tmp_path / "s")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    for what, path in stores.items():
        argv = {"report": ["report", "latest", "--store", path, "--out", tmp_path / "out"],
                "history": ["history", "library.cublas", "--store", path, "--out", tmp_path / "out"],
                "compare": ["compare", "latest", "latest", "--store", path, "--out", tmp_path / "out"]}[command]
        rc, err = run_cli(argv, capsys)
        assert rc == 2 and str(path) in err and "Traceback" not in err, (what, err)
    assert snapshot(tmp_path) == before  # no table, no -wal or -shm, no output folder


def test_reading_a_store_never_opens_it_for_writing(tmp_path, capsys, monkeypatch):
    """A store in a read-only folder (emulated: the test may run as root, whom permissions do not stop): any
    connection that could write fails, as it would there."""
    db = make_store(tmp_path / "g.db")
    real = sqlite3.connect

    def read_only_folder(database, *args, **kwargs):
        if not (kwargs.get("uri") and "mode=ro" in str(database)):
            raise sqlite3.OperationalError("unable to open database file")
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_folder)
    rc, err = run_cli(["report", "latest", "--store", db, "--out", tmp_path / "out"], capsys)
    assert rc == 0, err
    assert run_cli(["history", "library.cublas", "--store", db, "--out", tmp_path / "h"], capsys)[0] == 0


def test_a_store_that_cannot_be_written_stops_a_run_before_it_builds(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    (tmp_path / "ro").mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).startswith(str(tmp_path / "ro")) else
                        real(p, mode, **kw))
    from gemmcompare.build import experiment
    monkeypatch.setattr(experiment, "build_extensions", lambda *a, **k: pytest.fail("built before the store check"))
    for store, runs in ((tmp_path / "ro" / "g.db", tmp_path / "runs"), (tmp_path / "random.db", tmp_path / "runs"),
                        (tmp_path / "g2.db", tmp_path / "ro" / "runs"), (tmp_path / "g3.db", spec)):
        if store.name == "random.db":
            store.write_bytes(os.urandom(100))
        rc, err = run_cli(["run", spec, "--store", store, "--runs-dir", runs, "--no-progress"], capsys)
        assert rc == 2 and "Traceback" not in err and (str(store) in err or str(runs) in err), err


def test_out_that_is_a_file_or_not_writable(tmp_path, capsys, monkeypatch):
    db = make_store(tmp_path / "g.db")
    folder = tmp_path / "run1"
    store = Store(tmp_path / "g2.db")
    store_run(store, "r1", make_rows("r1", problems=((1024,) * 3,), sweep=False), folder=folder)
    store.close()
    blocker = tmp_path / "a_file"
    blocker.write_text("keep me")
    for argv in (["report", "latest", "--store", db, "--out", blocker],
                 ["compare", folder, folder, "--out", blocker],
                 ["history", "library.cublas", "--store", db, "--out", blocker],
                 ["report", "latest", "--store", db, "--out", blocker / "sub"]):
        rc, err = run_cli(argv, capsys)
        assert rc == 2 and str(blocker) in err and "Traceback" not in err, err
    assert blocker.read_text() == "keep me"
    (tmp_path / "ro").mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).startswith(str(tmp_path / "ro")) else
                        real(p, mode, **kw))
    rc, err = run_cli(["report", "latest", "--store", db, "--out", tmp_path / "ro" / "rep"], capsys)
    assert rc == 2 and "not writable" in err


def test_a_cache_dir_that_is_a_file(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)  # library.cublas needs a build
    (tmp_path / "cache").write_text("not a folder")
    rc, err = run_cli(["build", spec, "--cache-dir", tmp_path / "cache", "--arch", "sm_80"], capsys)
    assert rc == 2 and "not a folder" in err and str(tmp_path / "cache") in err


def results_file(tmp_path: Path, edit=None, receipt=None, name="results.json") -> Path:
    rows = [r.to_record() for r in make_rows("r1", problems=((1024,) * 3,), sweep=False)]
    records = [{k: (json.loads(v) if k in ("samples_ms", "params", "checks", "timing", "tolerance", "telemetry",
                                           "build_flags") else v) for k, v in r.items()} for r in rows]
    if edit:
        edit(records[0])
    path = tmp_path / name
    body = {"receipt": receipt_for("r1") if receipt is None else receipt, "results": records}
    path.write_text(json.dumps(body))  # json writes NaN and Infinity as they are
    return path


BAD_RESULTS = {
    "a list": lambda p: p.write_text("[1, 2]"),
    "a receipt that is a list": lambda p: results_file(p.parent, receipt=[1], name=p.name),
    "NaN median": lambda p: results_file(p.parent, lambda r: r.update(median_ms=math.nan), name=p.name),
    "inf tflops": lambda p: results_file(p.parent, lambda r: r.update(tflops=math.inf), name=p.name),
    "NaN sample": lambda p: results_file(p.parent, lambda r: r["samples_ms"].append(math.nan), name=p.name),
    "inf sample": lambda p: results_file(p.parent, lambda r: r["samples_ms"].append(math.inf), name=p.name),
    "zero sample": lambda p: results_file(p.parent, lambda r: r["samples_ms"].append(0.0), name=p.name),
    "negative sample": lambda p: results_file(p.parent, lambda r: r["samples_ms"].append(-1.0), name=p.name),
    "status 42": lambda p: results_file(p.parent, lambda r: r.update(status=42), name=p.name),
    "a row that is a list": lambda p: p.write_text(json.dumps({"receipt": {}, "results": [[1]]})),
    "nested": lambda p: p.write_text("[" * 100_000 + "]" * 100_000),
}


@pytest.mark.parametrize("what", list(BAD_RESULTS))
def test_a_bad_results_file_is_a_message_naming_it(what, tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.json"
    BAD_RESULTS[what](bad)
    good = results_file(tmp_path, name="good.json")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    for argv in (["report", bad, "--out", tmp_path / "rep"], ["compare", good, bad], ["compare", bad, good]):
        rc, err = run_cli(argv, capsys)
        assert rc == 2 and str(bad) in err and "Traceback" not in err, (what, argv, err)
    assert snapshot(tmp_path) == before


def test_a_damaged_cache_entry_is_rebuilt_not_loaded(tmp_path):
    plan = SimpleNamespace(module_name="gc_t_sm_80_0123")
    entry = tmp_path / plan.module_name
    entry.mkdir()
    so = entry / f"{plan.module_name}.so"
    so.write_bytes(os.urandom(100_000))
    (entry / "resources.json").write_text("[]")
    (entry / "build_seconds").write_text("1.0")
    (entry / "complete").write_text("")
    assert extension.cached_entry(tmp_path, plan) is None  # no manifest: an older or unfinished build
    seal(entry, entry_files(plan.module_name))
    assert extension.cached_entry(tmp_path, plan) == entry
    notes = []
    with open(so, "r+b") as f:
        f.truncate(50_000)  # loading this would be SIGBUS
    assert extension.cached_entry(tmp_path, plan, notes.append) is None and "50,000 bytes" in notes[0]
    assert "bytes when it was built" in damage(entry, entry_files(plan.module_name))
    so.write_bytes(os.urandom(100_000))
    seal(entry, entry_files(plan.module_name))
    (entry / "resources.json").write_text("[{not json")
    assert extension.cached_entry(tmp_path, plan) is None and "resources.json" in damage(entry, entry_files(plan.module_name))


def test_kernel_objects_check_their_cache_too(tmp_path):
    from gemmcompare.build.kernel_objects import compile_request
    from gemmcompare.errors import InputError
    from gemmcompare.implementations import FIXED

    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="build cache"):
        compile_request(FIXED["lab.scalar_coalesced"]().build_request("sm_80"), cache_dir=tmp_path / "file")


@pytest.mark.compile
def test_a_damaged_kernel_objects_entry_is_compiled_again(tmp_path):
    from gemmcompare.build.kernel_objects import TU_FILES, KernelObjects, compile_request
    from gemmcompare.implementations import FIXED

    req = FIXED["lab.scalar_coalesced"]().build_request("sm_80")
    first = compile_request(req, cache_dir=tmp_path)
    assert isinstance(first, KernelObjects) and first.tus and damage(first.tus[0].folder, TU_FILES) is None
    (first.tus[0].folder / "ptxas.log").write_text("ptxas info    : edited by hand")
    again = compile_request(req, cache_dir=tmp_path)
    assert isinstance(again, KernelObjects) and not again.cached and again.resources == first.resources


# -- nothing silently accepted ----------------------------------------------------------------------------------

@pytest.mark.parametrize("section, key", [("timing", "target_noise"), ("timing", "row_timeout_s"),
                                          ("timing", "max_ms"), ("warmup", "ms"), ("correctness", "c"),
                                          ("report", "threshold"), ("contract", "alpha"), ("contract", "beta")])
@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1.0e+999"])
def test_numeric_settings_must_be_finite(section, key, value):
    if section == "contract":
        text = ("name: t\nproblems: [{m: 8, n: 8, k: 8}]\n"
                f"contracts: [{{name: mine, a: f16, c: f32, {key}: {value}}}]\nimplementations: [library.cublas]\n")
    elif section == "warmup":
        text = SPEC + f"timing: {{warmup: {{{key}: {value}}}}}\n"
    else:
        text = SPEC + f"{section}: {{{key}: {value}}}\n"
    msg = issues(text)
    assert key in msg and ("finite" in msg or "at least" in msg)


def test_report_threshold_must_be_a_fraction():
    assert "threshold" in issues(SPEC + "report: {threshold: 0}\n")
    assert "threshold" in issues(SPEC + "report: {threshold: 5}\n")


def test_two_custom_entries_with_one_name_are_an_error():
    msg = issues(HEAD + "implementations:\n  - custom: {name: k, sources: [my_gemm.cu]}\n"
                 "  - custom: {name: k, sources: [wrong_last_column.cu]}\n")
    assert "custom.k" in msg and "already comes from implementations[0]" in msg
    msg = issues(HEAD + "implementations:\n  - custom: {name: k, sources: [my_gemm.cu], flags: [[-DA=1], [-DA=2]]}\n")
    assert "both named 'custom.k'" in msg


def test_repeating_a_builtin_implementation_is_an_error():
    assert "already comes from" in issues(HEAD + "implementations: [library.cublas, library.cublas]\n")


@pytest.mark.parametrize("entry", ["{name: \"x\\n\", sources: [my_gemm.cu]}",
                                   "{name: x, sources: [my_gemm.cu], entry: \"solve\\n\"}"])
def test_names_ending_in_a_newline_are_refused(entry):
    assert "C identifier" in issues(custom(entry))


def test_contract_and_kernel_names_ending_in_a_newline(tmp_path, capsys):
    msg = issues('name: t\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [{name: "mine\\n", a: f16}]\n'
                 'implementations: [library.cublas]\n')
    assert "contract name" in msg
    rc, err = run_cli(["new-kernel", "x\n", "--dir", tmp_path / "k"], capsys)
    assert rc == 2 and not (tmp_path / "k").exists()


# -- no wrong answers -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", ['{"receipt": {}, "results": []}', None, "a,b\n1,2\n", ""])
def test_compare_against_an_empty_or_columnless_file_exits_2(content, tmp_path, capsys, monkeypatch):
    good = results_file(tmp_path, name="good.json")
    if content is None:  # a results.csv with its header and no rows
        bad = tmp_path / "empty.csv"
        pd.DataFrame(json.loads(good.read_text())["results"])[:0].to_csv(bad, index=False)
    else:
        bad = tmp_path / ("empty.json" if content.startswith("{") else "bad.csv")
        bad.write_text(content)
    monkeypatch.chdir(tmp_path)
    for argv in (["compare", good, bad], ["compare", bad, good]):
        rc, err = run_cli(argv, capsys)
        assert rc == 2 and str(bad) in err, err
    assert not (tmp_path / "reports").exists()


def test_run_id_prefixes_are_literal(tmp_path, capsys):
    db = make_store(tmp_path / "g.db", runs=("20250101-000000-aaaaaa",))
    store = Store.open_read(db)
    assert store.find_run("%") is None and store.find_run("2_") is None and store.find_run("2025_") is None
    assert store.find_run("20250101")["run_id"] == "20250101-000000-aaaaaa"
    store.close()
    db2 = make_store(tmp_path / "g2.db", runs=("my_run", "myXrun"))
    store = Store.open_read(db2)
    assert store.find_run("my_")["run_id"] == "my_run"
    store.close()
    rc, err = run_cli(["report", "%", "--store", db, "--out", tmp_path / "out"], capsys)
    assert rc == 2 and "no run '%'" in err


# -- a read writes nothing --------------------------------------------------------------------------------------

def test_report_against_an_empty_file_creates_no_database(tmp_path, capsys):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    before = snapshot(tmp_path)
    rc, err = run_cli(["report", "latest", "--store", empty], capsys)
    assert rc == 2 and "empty" in err and snapshot(tmp_path) == before


def test_a_store_missing_its_results_table_is_not_given_one(tmp_path, capsys):
    db = make_store(tmp_path / "g.db")
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE results")
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    rc, err = run_cli(["report", "latest", "--store", db, "--out", tmp_path / "out"], capsys)
    assert rc == 2 and "no results table" in err
    assert snapshot(tmp_path) == before
    tables = {r[0] for r in sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT name FROM sqlite_master")}
    assert "results" not in tables


def test_every_read_only_command_leaves_the_folder_as_it_found_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("name: t\nproblems: [{m: 0, n: 8, k: 8}]\n")
    (tmp_path / "bad.json").write_text("[]")
    (tmp_path / "bad.db").write_bytes(os.urandom(1000))
    (tmp_path / "cache").write_text("")
    before = snapshot(tmp_path)
    for argv in (["validate", "bad.yaml"], ["report", "bad.json"], ["report", "latest", "--store", "bad.db"],
                 ["compare", "bad.json", "bad.json"], ["history", "x", "--store", "bad.db"],
                 ["list", "--resources", "--cache-dir", "cache", "--arch", "sm_80"],
                 ["report", "latest"], ["history", "x"]):
        rc, err = run_cli(argv, capsys)
        assert rc == 2 and "Traceback" not in err, (argv, err)
    assert snapshot(tmp_path) == before


# -- one Ctrl-C stops a parallel build --------------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


@pytest.mark.compile
@pytest.mark.torch_build
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_one_ctrl_c_stops_every_build_process(tmp_path):
    """Two extensions building side by side (each compiling its torch binding: tens of seconds); one Ctrl-C,
    sent as a terminal sends it (to the command's whole foreground process group), must end the command with
    exit 130 within seconds, leave no build process or compiler behind, and no half entry in the cache."""
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "gemmcompare", "build", str(BYO / "byo_kernel.yaml"), "--cache-dir", str(cache),
           "--no-progress", "--arch", "sm_80", "--jobs", "2"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own group, as a shell gives a foreground job
    seen: set[int] = set()
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            kids = _children(proc.pid)
            seen.update(kids)
            compilers = [k for k in kids if _name(k) in ("cc1plus", "cicc", "ptxas", "cudafe++", "nvcc")]
            if len(compilers) >= 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        else:
            pytest.fail("no two compilers ran within 120 s")
        seen.update(_children(proc.pid))
        t0 = time.time()
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        _, err = proc.communicate(timeout=30)
        stopped_in = time.time() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    assert stopped_in < 10, stopped_in
    time.sleep(0.5)
    left = [(p, _name(p)) for p in seen if _alive(p)]
    assert not left, f"processes outlived the command: {left}"
    names = sorted(os.listdir(cache))
    assert not [n for n in names if n.startswith(".tmp-")], names  # no half-built folder
    for entry in (cache / n for n in names if not n.endswith(".lock")):
        assert damage(entry, entry_files(entry.name)) is None  # whatever is in the cache is whole
