"""A fake GPU, so that the scheduling of a run (GPU sessions, the local pool, the Dask engine, shards and
merge) is tested on machines without CUDA.

`FakeSession` stands where worker.CudaSession stands (RunOptions.backend = BACKEND): it is "GPU i" when
the worker was started with CUDA_VISIBLE_DEVICES=i, as a real worker would be. Its executor writes the
rows a real one would (SKIP and BUILD_ERROR as the real admission does, PASS otherwise) with a made-up
median that depends on the implementation and on the GPU (GPU 1 is 10% slower), so a % of baseline
computed across two GPUs would show. Faults are asked for through the environment, which workers
inherit: GEMMCOMPARE_FAKE_FAULTS="crash:IMPL@PROBLEM,hang:IMPL@PROBLEM,kill_host:IMPL@PROBLEM" (each
fires once per GEMMCOMPARE_FAKE_ONCE_DIR), GEMMCOMPARE_FAKE_BROKEN_GPU=i (that GPU's worker cannot start).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from gemmcompare.build.experiment import ExperimentBuilds
from gemmcompare.build.extension import BuildFailure
from gemmcompare.device import DeviceInfo
from gemmcompare.results import Status
from gemmcompare.runner.gpus import GpuChoice

BACKEND = "fake_device:FakeSession"
DEVICE = DeviceInfo("Fake H200", (9, 0), 132, 60 * 2**20, 141 * 2**30, 0)
GPUS = [GpuChoice(i, str(i), "Fake H200", (9, 0)) for i in range(2)]


def fake_builds(exp, failing: tuple[str, ...] = ()) -> ExperimentBuilds:
    """What build_for would return: nothing to load (the fake runs no kernel), a failure where asked."""
    out = ExperimentBuilds(target_cc=90)
    for impl in exp.implementations:
        if impl.name in failing:
            out.by_impl[impl.name] = BuildFailure(None, f"{impl.name}.cu(1): error: planted", "", 0.5)
    return out


def _fault(kind: str, impl: str, problem: str) -> bool:
    wanted = f"{kind}:{impl}@{problem}"
    if wanted not in os.environ.get("GEMMCOMPARE_FAKE_FAULTS", "").split(","):
        return False
    once = os.environ.get("GEMMCOMPARE_FAKE_ONCE_DIR")
    if once:
        try:  # the first worker to get here fires it; a re-run does not
            os.close(os.open(Path(once) / wanted.replace("/", "_"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
    return True


class FakeSession:
    @staticmethod
    def prewarm(device_index: int, cupti: bool) -> dict:
        """What a real session warms up before its setup arrives; here it only leaves a mark where
        GEMMCOMPARE_FAKE_PREWARM_MARK says (a test's proof that the worker started early)."""
        mark = os.environ.get("GEMMCOMPARE_FAKE_PREWARM_MARK")
        if mark:
            Path(mark).write_text(f"{os.getpid()} {device_index} {cupti}")
        return {"import_s": 0.0}

    def __init__(self, setup):
        index = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0])
        if os.environ.get("GEMMCOMPARE_FAKE_BROKEN_GPU") == str(index):
            raise RuntimeError(f"fake GPU {index} is broken")
        self.gpu = {"uuid": f"GPU-fake-{index}", "index": index, "name": DEVICE.name, "compute_capability": "9.0",
                    "pid": os.getpid(), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
        self.builds = setup.builds

    def executor(self, setup, emit, stage):
        return FakeExecutor(setup, self.gpu["index"], self.builds, emit, stage)

    def stream(self):
        return contextlib.nullcontext()

    def after_job(self) -> None:
        pass


class FakeExecutor:
    def __init__(self, setup, gpu_index: int, builds, emit, stage):
        self.exp, self.run_id, self.gpu_index = setup.experiment, setup.run_id, gpu_index
        self.builds, self.emit, self.stage = builds, emit, stage

    def run(self, entry, contract, impls) -> None:
        from gemmcompare.runner.rows import base_row

        p = entry.problem
        timed = []
        for impl in impls:
            row = base_row(self.run_id, self.exp, entry, contract, impl.name, impl.family, impl.params)
            support = impl.check(p, contract, DEVICE)
            build = self.builds.get(impl.name)
            if not support:
                row.reason = support.reason
                self.emit(row)
            elif isinstance(build, BuildFailure):
                row.status, row.reason = Status.BUILD_ERROR, build.message
                self.emit(row)
            else:
                timed.append((impl, row))
        for impl, row in timed:
            self.stage(impl.name, "check uniform")
            if _fault("crash", impl.name, p.label):
                os._exit(9)  # as a kernel that takes the process down
            if _fault("hang", impl.name, p.label):
                time.sleep(3600)
            if _fault("kill_host", impl.name, p.label):
                os.kill(os.getppid(), signal.SIGKILL)  # the process that started this worker (a Dask worker)
                os._exit(9)  # orphaned: a real worker would leave at its next read of the dead pipe
            time.sleep(0.05)  # measuring takes time: with none, one GPU would finish before the other starts
            row.checks.append({"fixture": "uniform", "passed": True, "fake": True})
            row.status = Status.PASS
            if entry.time:
                speed = 1.0 + (sum(map(ord, impl.name)) % 7) / 10  # the same for an implementation everywhere
                row.median_ms = p.flops / 1e9 / speed * (1.1 if self.gpu_index == 1 else 1.0)
                row.samples_ms = [row.median_ms] * 3
                row.timing = {"l2_policy": self.exp.timing.l2}  # as the real Timer records it
            else:
                row.add_note("correctness only (time: false)")
        base = next((r for i, r in timed if i.name == self.exp.baseline and r.median_ms), None)
        for _, row in timed:
            if base is not None and row.median_ms:
                row.baseline, row.pct_of_baseline = base.implementation, 100.0 * base.median_ms / row.median_ms
            self.emit(row)
