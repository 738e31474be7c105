"""Measuring through a Dask cluster (`run SPEC --cluster ADDRESS`): Dask schedules, moves data and
re-runs the work of a worker that died; gemmcompare adds nothing of its own to that.

One Dask worker per GPU, one thread each (`dask cuda worker ADDRESS` does it; so does `dask worker
--nthreads 1` with CUDA_VISIBLE_DEVICES set per worker, or dask-jobqueue's SLURMCluster with one GPU
per job). Each group (problem x contract) is one Dask task. Inside the Dask worker the task hands its
group to a GpuSession, the same code that runs local GPUs: the kernels run in an isolated child
process on the worker's GPU, a crash or hang costs one row and a fresh child, and the session stays up
for the run's next groups on that worker. Rows go back to the parent as the task's result; the parent
alone writes the store. If a Dask worker itself dies, Dask gives its groups to other workers.

Builds happen once, in the parent, before any task is sent. When a worker runs on another host, each
finished extension travels to the workers as a small archive (the .so and its ptxas report) through
Dask's own data transfer, and is unpacked into the worker's build cache unless that host already holds
it where the parent left it (a shared file system).

`--cluster local` starts such a cluster on this host, one worker per GPU of --gpus (default all).
"""

from __future__ import annotations

import dataclasses
import io
import os
import platform
import shutil
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from ..build import cache_entry
from ..errors import GemmCompareError, NoDeviceError, UsageError
from ..results import Result, Status
from .gpu_session import GpuSession, SessionLost, job_row
from .gpus import VISIBLE, GpuChoice, nvml_visible_gpu
from .messages import BuiltExtensionRef, MeasureJob, WorkerSetup
from .pool import GpuStats, PoolReport

WAIT_FOR_WORKERS_S = 120


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError("--cluster needs Dask's distributed scheduler: pip install 'gemmcompare[cluster]' "
                         "(dask and distributed)") from None
    return distributed


# -- on a Dask worker -----------------------------------------------------------------------------------

_HOSTED: dict[str, GpuSession] = {}  # run id -> this worker's session (kept between the run's groups)
_LOCK = threading.Lock()  # one group at a time per worker process: one GPU, one measurement


def probe_worker() -> dict:
    """Run on each worker before building: its GPU (NVML only: no CUDA context in the Dask worker), and
    whether it may start the measuring process (a daemonic process may not have children)."""
    import multiprocessing

    return {"gpu": nvml_visible_gpu(), "visible": os.environ.get(VISIBLE), "host": platform.node(),
            "pid": os.getpid(), "daemon": multiprocessing.current_process().daemon}


def pack_build(ref: BuiltExtensionRef) -> bytes:
    """A finished extension as a gzip'd tar of its cache entry: what a worker loads (<module>.so and the
    build's report), the manifest that proves it whole, and the mark that it is finished."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:  # fast: it is sent once, over a LAN
        for name in (*cache_entry.entry_files(ref.plan.module_name), cache_entry.MANIFEST, "complete"):
            path = Path(ref.folder) / name
            if path.exists():
                tar.add(path, arcname=name)
    return buf.getvalue()


def _local_builds(setup: WorkerSetup, packed: dict[str, bytes] | None) -> WorkerSetup:
    """The setup with every build found on this host: where the parent left it (same host or a shared
    file system), else unpacked into this host's build cache (atomically, as a build would be)."""
    from ..build.cache_entry import default_cache_dir
    from ..build.extension import cached_entry

    builds = {}
    for name, b in setup.builds.items():
        if isinstance(b, BuiltExtensionRef) and cached_entry(Path(b.folder).parent, b.plan) is None:
            module = b.plan.module_name
            cache = default_cache_dir()
            final = cache / module
            if cached_entry(cache, b.plan) is None:
                if not packed or module not in packed:
                    raise GemmCompareError(f"build {module} is not on this worker and was not sent")
                cache.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{module}-", dir=cache))
                with tarfile.open(fileobj=io.BytesIO(packed[module]), mode="r:gz") as tar:
                    tar.extractall(tmp, filter="data")
                try:
                    os.rename(tmp, final)
                except OSError:  # another worker of this host unpacked it first, or a damaged entry is there
                    shutil.rmtree(tmp, ignore_errors=True)
                    if cached_entry(cache, b.plan) is None:
                        raise GemmCompareError(f"the build cache entry {final} on this worker is damaged: remove it, "
                                               f"and the run sends the build again") from None
            b = BuiltExtensionRef(b.plan, final)
        builds[name] = b
    return dataclasses.replace(setup, builds=builds)


def _session(setup: WorkerSetup, packed: dict[str, bytes] | None, silence_margin_s: float) -> GpuSession:
    """This worker's session for the run (call under _LOCK): made at its first task, kept for the rest."""
    session = _HOSTED.get(setup.run_id)
    if session is None:
        worker = _distributed().get_worker().address
        session = GpuSession(_local_builds(setup, packed), None, f"{platform.node()} {worker}",
                             silence_margin_s=silence_margin_s)
        _HOSTED[setup.run_id] = session
    return session


def start_worker(setup: WorkerSetup, packed: dict[str, bytes] | None, silence_margin_s: float) -> dict:
    """A Dask task sent to each worker before the groups: start its measuring process (torch, the CUDA
    context, the builds), so that the measuring phase does not include start-up, as on local GPUs."""
    worker = _distributed().get_worker().address
    with _LOCK:
        session = _session(setup, packed, silence_margin_s)
        try:
            session.start()
        except SessionLost as exc:
            _HOSTED.pop(setup.run_id, None)
            return {"gpu": {}, "worker": worker, "start_s": None, "lost": str(exc)}
        return {"gpu": session.gpu, "worker": worker, "start_s": session.started_s, "lost": None}


def measure_group(setup: WorkerSetup, packed: dict[str, bytes] | None, job: MeasureJob,
                  silence_margin_s: float) -> dict:
    """The Dask task: one group on this worker's GPU. Returns the rows, the GPU's receipt, and, if the
    GPU could not measure at all, why and what is left of the group."""
    worker = _distributed().get_worker().address
    with _LOCK:
        session = _session(setup, packed, silence_margin_s)
        rows: list[Result] = []
        t0 = time.monotonic()
        lost, remaining = None, None
        try:
            session.measure(job, rows.append)
        except SessionLost as exc:
            _HOSTED.pop(setup.run_id, None)
            session.close()
            lost, remaining = str(exc), exc.remaining
        return {"rows": rows, "gpu": session.gpu, "worker": worker, "busy_s": time.monotonic() - t0,
                "start_s": session.started_s, "lost": lost, "remaining": remaining}


def release(run_id: str) -> bool:
    """Run on each worker at the end: stop the run's measuring process there."""
    with _LOCK:
        session = _HOSTED.pop(run_id, None)
    if session is not None:
        session.stop()
    return session is not None


# -- in the parent --------------------------------------------------------------------------------------

# Dask worker processes are daemonic by default, and a daemonic process may not start children: the
# measuring process is one. Workers must run with this setting off (DASK_DISTRIBUTED__WORKER__DAEMON=False).
NOT_DAEMONIC = {"distributed.worker.daemon": False}


def local_cluster(gpus: list[GpuChoice]):
    """A Dask cluster on this host: a scheduler and one worker per GPU, each shown its GPU alone (what
    dask-cuda's LocalCUDACluster does; built from distributed's own parts so that it needs nothing more).
    The nannies read NOT_DAEMONIC whenever they (re)start a worker: it stays set until the cluster closes."""
    import dask

    distributed = _distributed()
    dask.config.set(NOT_DAEMONIC)
    # The worker processes set up distributed's logging when they import it, from their environment: at
    # its default (INFO) each worker prints a dozen lines on start and on stop into the run's output.
    # Warnings and errors still come through; a user's own setting wins.
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
    workers = {f"gpu{g.index}": {"cls": distributed.Nanny,
                                 "options": {"nthreads": 1, "env": {VISIBLE: g.visible}, "memory_limit": 0}}
               for g in gpus}
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40)


class DaskPool:
    """The cluster's GPU workers seen as one pool: measure(jobs, emit, ...) as pool.LocalPool does."""

    def __init__(self, address: str, local_gpus: list[GpuChoice] | None = None,
                 silence_margin_s: float = 120.0, log: Callable[[str], None] = lambda msg: None):
        distributed = _distributed()
        self.log, self.silence_margin_s = log, silence_margin_s
        self.cluster = None
        try:
            if address == "local":
                if not local_gpus:
                    raise NoDeviceError("--cluster local: this machine has no CUDA device to start workers on")
                self.cluster = local_cluster(local_gpus)
                self.client = distributed.Client(self.cluster)
            else:
                self.client = distributed.Client(address, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"--cluster {address}: cannot reach a Dask scheduler there ({exc})") from None
        self.address = address if address != "local" else self.client.scheduler.address
        try:
            self.client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
        except TimeoutError:
            self.close()
            raise UsageError(f"--cluster {address}: no worker joined within {WAIT_FOR_WORKERS_S} s") from None
        self.workers = self.client.run(probe_worker)  # worker address -> its GPU
        self._check_workers()

    def _check_workers(self) -> None:
        daemonic = [addr for addr, info in self.workers.items() if info.get("daemon")]
        if daemonic:
            self.close()
            raise UsageError(f"--cluster: worker(s) {', '.join(daemonic)} run as daemonic processes, which may not "
                             f"start the isolated measuring process; start them with "
                             f"DASK_DISTRIBUTED__WORKER__DAEMON=False in their environment (docs/scaling.md)")
        by_uuid: dict[str, str] = {}
        for addr, info in self.workers.items():
            uuid = (info.get("gpu") or {}).get("uuid")
            if uuid and uuid in by_uuid:
                self.close()
                raise UsageError(f"--cluster: workers {by_uuid[uuid]} and {addr} share GPU {uuid}: two measurements "
                                 f"on one GPU disturb each other. Start one worker per GPU (dask cuda worker, or "
                                 f"{VISIBLE} per worker)")
            if uuid:
                by_uuid[uuid] = addr
        ccs = {(info.get("gpu") or {}).get("compute_capability") for info in self.workers.values()} - {None}
        if len(ccs) > 1:
            self.close()
            raise UsageError(f"--cluster: the workers' GPUs differ in compute capability ({', '.join(sorted(ccs))}); "
                             f"one build serves one: run each kind on its own cluster (or as shards) and merge")

    def device(self):
        """A DeviceInfo for the build target and the receipt: the first worker's GPU (None if unknown)."""
        from ..device import DeviceInfo

        for info in self.workers.values():
            gpu = info.get("gpu")
            if gpu:
                major, minor = (int(x) for x in gpu["compute_capability"].split("."))
                return DeviceInfo(gpu["name"], (major, minor), 0, 0, gpu.get("memory_bytes") or 0, 0)
        return None

    def gpu_names(self) -> list[str]:
        return [info["gpu"]["name"] for info in self.workers.values() if info.get("gpu")]

    def describe(self) -> dict:
        return {"kind": "dask", "scheduler": self.address, "workers": self.workers}

    def measure(self, setup: WorkerSetup, jobs: list[MeasureJob], emit: Callable[[Result], None],
                on_gpu: Callable[[dict], None] = lambda gpu: None,
                on_job: Callable[[str, MeasureJob], None] = lambda label, job: None) -> PoolReport:
        distributed = _distributed()
        client, report = self.client, PoolReport()
        # builds travel to an outside cluster's workers (any may be on another host, or join later); the
        # workers of --cluster local load them where they are
        packed = {b.plan.module_name: pack_build(b) for b in setup.builds.values()
                  if isinstance(b, BuiltExtensionRef)} if self.cluster is None else {}
        setup_f = client.scatter(setup, broadcast=True, hash=False)
        packed_f = client.scatter(packed, broadcast=True, hash=False) if packed else None
        given_up: set[str] = set()
        seen: set[str] = set()
        job_of = {}  # future key -> its group, while it is not done

        def submit(job: MeasureJob, priority: int, workers=None):
            fut = client.submit(measure_group, setup_f, packed_f, job, self.silence_margin_s, pure=False,
                                priority=priority, workers=workers, allow_other_workers=False)
            job_of[fut.key] = (job, fut)
            return fut

        for out in client.gather([client.submit(start_worker, setup_f, packed_f, self.silence_margin_s, pure=False,
                                                workers=[addr], allow_other_workers=False) for addr in self.workers]):
            if out["lost"]:
                given_up.add(out["worker"])
                report.lost.append(out["lost"])
                self.log(f"{out['worker']} given up: {out['lost']}")
            elif out["gpu"].get("uuid") not in seen:
                seen.add(out["gpu"].get("uuid"))
                on_gpu(out["gpu"])
                report.gpus[out["gpu"].get("uuid") or out["worker"]] = GpuStats(start_s=out["start_s"])
        usable = [addr for addr in self.workers if addr not in given_up] or None  # None: any that joins later
        if given_up and usable is None:
            raise SessionLost(f"no cluster worker could start measuring; last error: {report.lost[-1]}", None)

        t0 = time.monotonic()
        futures = [submit(job, len(jobs) - i, usable if given_up else None)  # costliest first
                   for i, job in enumerate(jobs)]
        done = distributed.as_completed(futures)
        try:
            for fut in done:
                job, _ = job_of.pop(fut.key)
                try:
                    out = fut.result()
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: Dask gave up re-running it
                    self.log(f"group {job.problem_index}/{job.contract} failed on the cluster: {exc}")
                    for row in self._failed_rows(setup, job, exc):
                        emit(row)
                        report.rows += 1
                    continue
                uuid = out["gpu"].get("uuid") or out["worker"]
                if out["gpu"] and uuid not in seen:
                    seen.add(uuid)
                    on_gpu(out["gpu"])
                stats = report.gpus.setdefault(uuid, GpuStats(start_s=out["start_s"]))
                stats.busy_s += out["busy_s"]
                stats.groups += 1
                for row in out["rows"]:
                    emit(row)
                    report.rows += 1
                    stats.rows += 1
                if out["lost"]:
                    given_up.add(out["worker"])
                    report.lost.append(out["lost"])
                    self.log(f"{out['worker']} given up: {out['lost']}")
                    if out["remaining"] is not None:
                        others = [w for w in client.scheduler_info()["workers"] if w not in given_up]
                        if not others:
                            raise SessionLost(f"no cluster worker left to measure on; last error: {out['lost']}", None)
                        done.add(submit(out["remaining"], len(jobs) + 1, workers=others))
        except BaseException:
            client.cancel([f for _, f in job_of.values()])
            raise
        finally:
            report.measure_s = time.monotonic() - t0
            try:
                client.run(release, setup.run_id)
            except Exception:  # noqa: BLE001 - a worker that is gone has nothing to release
                pass
        return report

    @staticmethod
    def _failed_rows(setup: WorkerSetup, job: MeasureJob, exc: BaseException) -> list[Result]:
        impls = {i.name: i for i in setup.experiment.implementations}
        rows = []
        for name in job.implementations:
            row = job_row(setup, job, impls[name])
            row.status = Status.CRASH
            row.reason = f"the cluster could not measure this group: {type(exc).__name__}: {exc}"
            rows.append(row)
        return rows

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass
        if self.cluster is not None:
            self.cluster.close()
