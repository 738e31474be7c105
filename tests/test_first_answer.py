"""A first answer comes fast (issue 27): a build on a warm cache imports neither torch nor pandas and
still misses on every change that changes the binary; a run records each phase's wall seconds in its
receipt and prints them in one line; its measuring worker is started before the builds are looked up.
CPU only: the run tests use the fake GPU (fake_device.py)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gemmcompare.build import extension, toolchain
from gemmcompare.build.binding import EntryPoint
from gemmcompare.build.request import KernelSource

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra):
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


# -- the build cache --------------------------------------------------------------------------------------

def test_torchs_versions_are_read_without_importing_it_and_are_torchs_own():
    code = ("import sys; from gemmcompare.build import toolchain; v = toolchain.torch_versions();"
            "before = 'torch' in sys.modules; import torch;"
            "print(before, v['torch'] == str(torch.__version__), v['cuda'] == torch.version.cuda)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]


def _plan(tmp_path: Path, source: str = "#include \"mine.cuh\"\n// kernel\n", header: str = "// v1\n",
          arch: str = "sm_80", flags: tuple[str, ...] = (), cutlass: bool = False) -> extension.ExtensionPlan:
    kernel = tmp_path / "k.cu"
    kernel.write_text(source)
    (tmp_path / "mine.cuh").write_text(header)
    return extension.ExtensionPlan("t", arch, [KernelSource("k.cu", path=kernel)], [EntryPoint("f", False)],
                                   flags, (), cutlass)


def test_the_cache_key_misses_on_every_change_that_changes_the_binary(tmp_path, monkeypatch):
    versions = {"nvcc": "13.0", "torch": "2.11.0+cu130", "cutlass": "4.2.0.0"}
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: versions["nvcc"])
    monkeypatch.setattr(toolchain, "torch_version", lambda: versions["torch"])
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: versions["cutlass"])
    base = _plan(tmp_path, cutlass=True).cache_key()
    assert _plan(tmp_path, cutlass=True).cache_key() == base  # the same inputs hit
    changed = {
        "source": _plan(tmp_path, source="#include \"mine.cuh\"\n// kernel 2\n", cutlass=True).cache_key(),
        "included header": _plan(tmp_path, header="// v2\n", cutlass=True).cache_key(),
        "arch": _plan(tmp_path, arch="sm_90", cutlass=True).cache_key(),
        "flags": _plan(tmp_path, flags=("-DX=1",), cutlass=True).cache_key(),
    }
    for what, value in (("nvcc", "13.1"), ("torch", "2.12.0+cu130"), ("cutlass", "4.3.0.0")):
        old, versions[what] = versions[what], value
        changed[f"{what} version"] = _plan(tmp_path, cutlass=True).cache_key()
        versions[what] = old
    for what, key in changed.items():
        assert key != base, f"a change of the {what} still hits the cache"
    assert len(set(changed.values())) == len(changed)


SPEC = """\
name: cached
problems: [{m: 256, n: 256, k: 256}]
contracts: [f32_strict_tt]
implementations: [lab.scalar_coalesced, lab.shared_16x16]
"""


def test_a_build_on_a_warm_cache_imports_neither_torch_nor_pandas(tmp_path, nvcc):
    """The cache is filled with sealed entries under the names the plans hash to (no compiler runs); `build`
    then finds every one of them, says so, and has loaded no heavy library."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import sys
        from gemmcompare.build.cache_entry import entry_files, seal
        from gemmcompare.build import extension
        from gemmcompare.spec import load_spec
        from gemmcompare.cli import main

        exp = load_spec({str(spec)!r})
        planned = extension.plan_extensions([i.build_request(i.target_arch(80)) for i in exp.implementations])
        for plan in planned:  # what a finished build leaves in the cache
            entry = {str(cache)!r} + "/" + plan.module_name
            import os; os.makedirs(entry)
            open(entry + "/" + plan.module_name + ".so", "wb").write(b"not loaded by build")
            open(entry + "/resources.json", "w").write("[]")
            open(entry + "/build_seconds", "w").write("12.5")
            seal(__import__("pathlib").Path(entry), entry_files(plan.module_name))
            open(entry + "/complete", "w").write("")
        code = main(["build", {str(spec)!r}, "--arch", "sm_80", "--cache-dir", {str(cache)!r}, "--no-progress"])
        print("EXIT", code, "PLANS", len(planned), "LOADED", [m for m in ("torch", "pandas", "matplotlib")
                                                             if m in sys.modules])
    """)
    # no GPU shown to it: on a GPU machine the device's own arch would win over --arch (and compile)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env=_env(CUDA_VISIBLE_DEVICES=""), timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("cached]") == 2, out
    assert out.strip().splitlines()[-1] == "EXIT 0 PLANS 1 LOADED []", out


def test_a_cached_extension_is_imported_where_it_is_launched(tmp_path, monkeypatch):
    loaded = []
    monkeypatch.setattr(extension, "_load_module", lambda name, so: loaded.append(so) or f"module {name}")
    folder = tmp_path / "gc_t"
    folder.mkdir()
    (folder / "build_seconds").write_text("3.5")
    plan = type("P", (), {"module_name": "gc_t_not_imported"})()
    ext = extension.load_extension(plan, folder, cached=True, import_now=False)
    assert loaded == [] and ext.build_seconds == 3.5
    assert ext.module == "module gc_t_not_imported" and loaded == [folder / "gc_t_not_imported.so"]
    ext.module  # noqa: B018 - once imported, kept
    assert len(loaded) == 1
    extension.load_extension(plan, folder, cached=False)  # a fresh build is imported at once
    assert len(loaded) == 2


# -- the run's phases and its early worker (fake GPU) ------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_device  # noqa: E402

from gemmcompare import cli  # noqa: E402
from gemmcompare.runner import parent  # noqa: E402
from gemmcompare.runner.executor import ProblemExecutor  # noqa: E402
from gemmcompare.runner.phases import GROUPS, PARENT, phase_line  # noqa: E402

RUN_SPEC = """\
name: phases
problems: [{m: 256, n: 256, k: 256}, {m: 512, n: 512, k: 512}]
contracts: [f16_f32acc_tn]
implementations: [library.cublas, library.torch_matmul]
baseline: library.cublas
timing: {row_timeout_s: 5}
"""


def _fake_cli(monkeypatch, build_for=None):
    """`gemmcompare run` on the fake GPU: the real command, its Runner given the fake device and backend."""
    from gemmcompare.cli import run as cli_run

    monkeypatch.setattr(parent, "build_for", build_for or (lambda exp, device, o: fake_device.fake_builds(exp)))
    real_options = cli_run.run_options
    monkeypatch.setattr(cli_run, "run_options", lambda args: __import__("dataclasses").replace(
        real_options(args), backend=fake_device.BACKEND, silence_margin_s=5.0))

    class FakeHostRunner(parent.Runner):
        def __init__(self, exp, opts, **kw):
            super().__init__(exp, opts, device=fake_device.DEVICE, gpus=fake_device.GPUS[:1], **kw)

    monkeypatch.setattr(parent, "Runner", FakeHostRunner)


def test_a_run_keeps_its_phases_in_the_receipt_and_prints_them_in_one_line(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "phases.yaml"
    spec.write_text(RUN_SPEC)
    _fake_cli(monkeypatch)
    code = cli.main(["run", str(spec), "--store", str(tmp_path / "g.db"), "--runs-dir", str(tmp_path / "runs"),
                     "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    (line,) = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("phases:")]
    for label in ("spec", "plan", "build", "run set-up", "worker wait", "measure", "report", "total"):
        assert f"{label} " in line, (label, line)
    assert "worker (beside the parent): start" in line and "in measure: store" in line
    (run_dir,) = (tmp_path / "runs").iterdir()
    phases = json.loads((run_dir / "receipt.json").read_text())["phases_s"]
    parent_keys = [key for key, _ in PARENT]
    assert set(parent_keys) <= set(phases) and {"total_s", "worker_start_s", "store_s"} <= set(phases)
    assert all(value >= 0 for value in phases.values())
    assert phases["report_s"] > 0 and phases["measure_s"] > 0
    # the parent's phases follow one another inside the process's life: they cannot add up to more
    assert sum(phases[key] for key in parent_keys) <= phases["total_s"] + 0.05
    receipt = json.loads((run_dir / "receipt.json").read_text())
    startup = receipt["gpus"][0]["worker_startup_s"]
    assert startup["session_s"] >= 0 and startup["spawn_s"] >= 0
    # the worker's steps placed in time from its spawn, in order, and the parent's two ends of it
    timeline = startup["timeline_s"]
    steps = ["entry", "progress_lock", "prewarm", "setup_received", "setup_unpickled", "main_imports", "ready"]
    assert [timeline[s] for s in steps] == sorted(timeline[s] for s in steps), timeline
    assert timeline["ready"] <= timeline["ready_received"] and "setup_sent" in timeline
    assert not any(key.startswith("worker_timeline") for key in phases)  # not a phase: the receipt keeps it


def test_the_measuring_worker_starts_before_the_builds_are_looked_up(tmp_path, monkeypatch, capsys):
    """The fake session's warm-up leaves a mark; the build stub waits for it. A worker started only after
    the builds (as before) would never leave it in time, and the stub says so."""

    mark = tmp_path / "prewarmed"
    monkeypatch.setenv("GEMMCOMPARE_FAKE_PREWARM_MARK", str(mark))
    seen = []

    def build_for(exp, device, opts):
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(mark.exists())
        return fake_device.fake_builds(exp)

    spec = tmp_path / "phases.yaml"
    spec.write_text(RUN_SPEC)
    _fake_cli(monkeypatch, build_for)
    code = cli.main(["run", str(spec), "--store", str(tmp_path / "g.db"), "--runs-dir", str(tmp_path / "runs"),
                     "--no-progress", "--no-report"])
    assert code == 0, capsys.readouterr()
    assert seen == [True], "the worker had not started when the builds were looked up"
    pid, device_index, cupti = mark.read_text().split()
    assert device_index == "0" and cupti == "True"  # its one GPU is device 0; the spec's timing is `auto`
    (run_dir,) = (tmp_path / "runs").iterdir()
    startup = json.loads((run_dir / "receipt.json").read_text())["gpus"][0]["worker_startup_s"]
    assert startup["setup_wait_s"] > 0 and "import_s" in startup  # it waited for the setup, warmed up


def test_no_worker_is_started_early_where_it_could_not_be_used(monkeypatch):
    from gemmcompare.runner import gpus
    from gemmcompare.spec import parse_spec

    exp = parse_spec(RUN_SPEC, "phases.yaml")
    started = []
    monkeypatch.setattr("gemmcompare.runner.worker.WorkerHandle.prestart", classmethod(
        lambda cls, visible, backend, cupti: started.append(visible) or visible))
    monkeypatch.setattr(gpus, "nvml_visible_gpu", lambda environ=os.environ: None)
    assert parent._prestart(exp, parent.RunOptions(), None) == {}  # no GPU here: nothing to start
    assert parent._prestart(exp, parent.RunOptions(gpus="all"), fake_device.GPUS) == {}  # needs torch to know
    assert parent._prestart(exp, parent.RunOptions(cluster="local"), fake_device.GPUS) == {}
    assert parent._prestart(exp, parent.RunOptions(isolate=False), fake_device.GPUS) == {}
    assert started == []
    assert parent._prestart(exp, parent.RunOptions(gpus="1,0"), fake_device.GPUS) == {"1": "1", "0": "0"}


def test_the_pool_ends_early_workers_of_gpus_it_does_not_use():
    from gemmcompare.runner.pool import LocalPool

    class Handle:
        killed = False

        def kill(self):
            self.killed = True

    used, unused = Handle(), Handle()
    pool = LocalPool(fake_device.GPUS[1:], 1.0, prestarted={"0": unused, "1": used})
    assert unused.killed and not used.killed
    pool.close()
    assert used.killed


def test_a_groups_phases_add_up_without_counting_a_nested_one_twice(monkeypatch):
    # A clock the test moves: sleeping would make the sums depend on how busy the machine is (CI's floor suite
    # runs at nice 19 beside the other suite).
    from gemmcompare.runner import executor

    clock = {"s": 100.0}
    monkeypatch.setattr(executor.time, "monotonic", lambda: clock["s"])
    ex = ProblemExecutor(None, "run", fake_device.DEVICE, {}, None, emit=lambda row: None)
    with ex._phase("timing_s"):
        clock["s"] += 0.05
        with ex._phase("inputs_refs_s"):
            clock["s"] += 0.2
        clock["s"] += 0.01
    phases = ex.take_phases()
    assert phases["inputs_refs_s"] == pytest.approx(0.2)
    assert phases["timing_s"] == pytest.approx(0.06)  # its own time only, the nested phase not counted twice
    assert ex.take_phases() == {}


def test_every_phase_the_code_times_is_one_the_phase_line_knows():
    """A phase timed under a name the line does not list would be kept in the receipt but never shown."""
    import re

    root = Path(__file__).resolve().parents[1] / "gemmcompare"
    timed = set()
    for path in [*root.glob("runner/*.py"), root / "contracts" / "timing.py"]:
        timed |= set(re.findall(r'(?:phase|timed)\("([a-z_]+_s)"\)', path.read_text()))
    known = {k for k, _ in GROUPS} | {k for k, _ in PARENT}
    assert {"inputs_refs_s", "tuning_s", "cupti_wait_s", "plan_s"} <= timed
    assert timed <= known, timed - known


def test_the_phase_line_reads_in_order_and_leaves_out_what_a_run_did_not_do():
    line = phase_line({"build_s": 0.25, "spec_s": 0.04, "measure_s": 6.0, "total_s": 9.87, "timing_s": 3.3,
                       "inputs_refs_s": 0.8, "worker_start_s": 4.2})
    assert line == ("phases: spec 0.0 s, build 0.2 s, measure 6.0 s; total 9.9 s | worker (beside the parent): "
                    "start 4.2 s | in measure: inputs+refs 0.8 s, timing 3.3 s")


class _FakeNvml:
    """pynvml with two GPUs of the given capabilities (NVML index order), or a driver that is not there."""

    NVML_ERROR_LIBRARY_NOT_FOUND, NVML_ERROR_DRIVER_NOT_LOADED = 12, 9

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(value)
            self.value = value

    def __init__(self, ccs=((9, 0), (9, 0)), init_error=None):
        self.ccs, self.init_error = ccs, init_error

    def nvmlInit(self):
        if self.init_error is not None:
            raise self.NVMLError(self.init_error)

    def nvmlDeviceGetCount(self):
        return len(self.ccs)

    def nvmlDeviceGetHandleByIndex(self, i):
        if i >= len(self.ccs):
            raise self.NVMLError(2)
        return i

    def nvmlDeviceGetHandleByUUID(self, uuid):
        return int(uuid.rsplit("-", 1)[1])

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return self.ccs[h]

    def nvmlDeviceGetName(self, h):
        return f"GPU{h} sm_{self.ccs[h][0]}{self.ccs[h][1]}".encode()

    def nvmlDeviceGetMemoryInfo(self, h):
        return type("M", (), {"total": 141 << 30})()


@pytest.mark.parametrize("nvml, visible, expected", [
    (_FakeNvml(init_error=12), None, None),  # no driver: no CUDA device either
    (_FakeNvml(init_error=9), "0", None),
    (_FakeNvml(), None, ("GPU0 sm_90", (9, 0))),
    (_FakeNvml(((8, 0), (9, 0))), "1", ("GPU1 sm_90", (9, 0))),  # the one GPU it may see
    (_FakeNvml(((8, 0), (9, 0))), "GPU-x-1", ("GPU1 sm_90", (9, 0))),
    (_FakeNvml(), "", None),  # CUDA_VISIBLE_DEVICES="" shows CUDA no GPU
    (_FakeNvml(((8, 0), (9, 0))), None, "torch"),  # which is CUDA's device 0? torch must say
    (_FakeNvml(), "MIG-1234", "torch"),
    (_FakeNvml(init_error=3), None, "torch"),  # NVML failed for another reason
])
def test_the_build_target_comes_from_nvml_where_nvml_is_exact(monkeypatch, nvml, visible, expected):
    from gemmcompare import device

    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monkeypatch.setattr(device, "probe_device", lambda index=0: "torch")
    environ = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
    got = device.probe_build_target(environ)
    if isinstance(got, device.DeviceInfo):
        got = (got.name, got.cc)
    assert got == expected


def test_the_first_clock_start_waits_for_the_background_warm_up(monkeypatch):
    """CUPTI's first start runs on a thread during the worker's start-up; a KernelClock may not start beside
    it (one profiler at a time), and its steps are reported once, after it ended."""
    from gemmcompare.contracts import timing_methods

    monkeypatch.setattr(timing_methods, "_warm_up", {"thread": None, "steps": {}, "reported": False})
    order = []

    def slow_warm_up(steps):
        time.sleep(0.3)
        steps["cupti_warmup_s"] = 0.3
        order.append("warm-up ended")

    monkeypatch.setattr(timing_methods, "_warm_up_cupti", slow_warm_up)
    timing_methods.warm_up_in_background()
    timing_methods.warm_up_in_background()  # once per process
    assert timing_methods.take_warm_up_steps() == {}  # still running: nothing to report yet
    clock = timing_methods.KernelClock()
    monkeypatch.setattr(clock, "_prof", None)
    import builtins
    real_import = builtins.__import__

    def no_torch_profiler(name, *args, **kwargs):  # the clock's own start fails here: what matters is when
        if name in ("torch.profiler", "torch.autograd.profiler"):
            order.append("clock started")
            raise ImportError("no profiler in this test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch_profiler)
    assert clock.start() is False
    monkeypatch.setattr(builtins, "__import__", real_import)
    assert order == ["warm-up ended", "clock started"]
    assert timing_methods.take_warm_up_steps() == {"cupti_warmup_s": 0.3}
    assert timing_methods.take_warm_up_steps() == {}  # reported once


# -- on the GPU (the lead's device run) ---------------------------------------------------------------------

@pytest.mark.gpu
def test_a_prewarmed_worker_leaves_cupti_ready_for_the_timer():
    import torch

    from gemmcompare.contracts.timing import Launcher, Timer, TimingSettings
    from gemmcompare.runner.worker import CudaSession

    from gemmcompare.contracts import timing_methods

    steps = CudaSession.prewarm(torch.cuda.current_device(), True)
    assert set(steps) == {"import_s", "cuda_context_s", "cublas_s", "first_kernels_s"}, steps
    a = torch.randn(512, 512, device="cuda")
    out = torch.empty_like(a)
    phases = {}

    @contextlib.contextmanager
    def phase(name):
        t0 = time.monotonic()
        yield
        phases[name] = phases.get(name, 0.0) + time.monotonic() - t0

    timer = Timer(TimingSettings(l2="warm", method="cupti", min_samples=10, max_samples=20), 0, phase=phase)
    m = timer.measure([Launcher("mm", lambda: torch.mm(a, a, out=out))])["mm"]
    assert m.method == "cupti" and m.samples_ms, m.method_note  # the warm-up's profiler is not left running
    assert "cupti_wait_s" in phases, phases  # the timer waited for the warm-up's thread (if it still ran)
    warm_up = timing_methods.take_warm_up_steps()
    assert warm_up.get("cupti_warmup_s", 0) > 0 and warm_up.get("cupti_warmup_start_s", 0) > 0, warm_up


@pytest.mark.gpu
def test_a_real_runs_receipt_says_where_its_time_went(tmp_path):
    from gemmcompare.spec import parse_spec

    spec = RUN_SPEC.replace("[{m: 256, n: 256, k: 256}, {m: 512, n: 512, k: 512}]", "[{m: 256, n: 256, k: 256}]")
    runner = parent.Runner(parse_spec(spec, "phases.yaml"), parent.RunOptions(
        store=tmp_path / "g.db", runs_dir=tmp_path / "runs", progress=False))
    out = runner.run()
    assert out.status == "complete" and all(r.status.value == "PASS" for r in out.rows), [r.reason for r in out.rows]
    phases = runner.finish_phases()
    for key in ("gpu_probe_s", "build_s", "worker_start_s", "worker_import_s", "worker_cuda_context_s",
                "worker_cublas_s", "worker_first_kernels_s", "cupti_warmup_s", "cupti_wait_s", "inputs_refs_s",
                "check_s", "timing_s", "warmup_s", "cupti_s", "telemetry_s", "recheck_s", "measure_s", "total_s"):
        assert phases.get(key, -1) >= 0, (key, phases)
    # the worker warmed up beside the parent: the parent waited less for it than it took to start
    assert phases["worker_wait_s"] < phases["worker_start_s"], phases
    receipt = json.loads((out.run_dir / "receipt.json").read_text())
    assert receipt["phases_s"]["measure_s"] == phases["measure_s"]


def test_cupti_is_warmed_up_only_for_a_run_that_will_start_it():
    from gemmcompare.plan import narrow
    from gemmcompare.runner.worker import wants_cupti
    from gemmcompare.spec import parse_spec

    exp = parse_spec(RUN_SPEC, "phases.yaml")
    assert wants_cupti(exp)
    assert not wants_cupti(narrow(exp, None, True, None))  # --check-only: nothing is timed
    assert not wants_cupti(parse_spec(RUN_SPEC.replace("row_timeout_s: 5", "row_timeout_s: 5, method: events"),
                                      "events.yaml"))


@pytest.mark.gpu
def test_a_warm_runs_parent_never_imports_torch(tmp_path):
    """The parent of a run on a warm build cache has no use for torch: the CUDA driver answers its GPU probe, the
    cache answers its builds, and the worker measures. Importing it costs seconds (4-5 s on the H200), and a
    torch-typed value in any message from the worker makes the parent import it just to unpickle that message
    (the GPU receipt's TorchVersion did: 2.8-4.2 s of a warm quickstart). Two runs of one spec in subprocesses:
    the first warms the cache, the second's parent must end without torch in sys.modules."""
    spec = tmp_path / "phases.yaml"
    spec.write_text(RUN_SPEC.replace("[{m: 256, n: 256, k: 256}, {m: 512, n: 512, k: 512}]", "[{m: 256, n: 256, k: 256}]"))
    code = textwrap.dedent(f"""
        import sys
        from gemmcompare import cli
        code = cli.main(["run", {str(spec)!r}, "--store", {str(tmp_path / "g.db")!r}, "--runs-dir",
                         {str(tmp_path / "runs")!r}, "--no-progress"])
        print("exit", code, "torch imported:", "torch" in sys.modules)
        """)
    env = {**os.environ, "GEMMCOMPARE_CACHE_DIR": str(tmp_path / "cache")}
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
            for _ in range(2)]
    assert "exit 0" in outs[0].stdout, outs[0].stdout[-2000:] + outs[0].stderr[-3000:]
    assert outs[1].stdout.strip().splitlines()[-1] == "exit 0 torch imported: False", \
        outs[1].stdout[-2000:] + outs[1].stderr[-3000:]
