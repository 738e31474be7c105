"""Scaling out on real GPUs (issue 17): the worker of each GPU sees that GPU alone, rows and receipts
name it, groups keep their baseline on one GPU, shards merge into the whole plan, and the Dask engine
measures the same cells. The two-GPU tests skip on a machine with one."""

from pathlib import Path

import pytest

from gemmcompare import cli
from gemmcompare.plan import make_plan, narrow
from gemmcompare.results import Status
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec
from gemmcompare.store import Store

pytestmark = pytest.mark.gpu

SPEC = Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml"
SHAPES = "256x256x256,512x512x512,1024x1024x1024"


def _device_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


two_gpus = pytest.mark.skipif(_device_count() < 2, reason="needs two GPUs")


def _exp():
    return narrow(load_spec(SPEC), shapes=SHAPES)


def _run(tmp_path, name, **opts):
    options = RunOptions(store=tmp_path / f"{name}.db", runs_dir=tmp_path / name, progress=False, **opts)
    out = Runner(_exp(), options).run()
    receipt = Store(tmp_path / f"{name}.db").run(out.run_id)["receipt"]
    return out, receipt


def _nvml_uuids() -> set[str]:
    import pynvml

    pynvml.nvmlInit()
    uuids = set()
    for i in range(pynvml.nvmlDeviceGetCount()):
        u = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i))
        uuids.add(u.decode() if isinstance(u, bytes) else u)
    return uuids


def _check_groups(rows) -> None:
    """Each group on one GPU, and each % of baseline from the baseline row of that GPU."""
    by_group: dict = {}
    for r in rows:
        by_group.setdefault((r.problem, r.contract), []).append(r)
    for group in by_group.values():
        assert len({r.gpu_uuid for r in group}) == 1
        base = [r for r in group if r.is_baseline and r.median_ms]
        for r in group:
            if r.pct_of_baseline is not None:
                assert r.pct_of_baseline == pytest.approx(100.0 * base[0].median_ms / r.median_ms)


def test_rows_and_the_receipt_name_the_gpu(tmp_path):
    out, receipt = _run(tmp_path, "one")
    assert out.status == "complete" and {r.status for r in out.rows} == {Status.PASS}
    (gpu,) = receipt["gpus"]
    assert gpu["uuid"] in _nvml_uuids() and gpu["devices_visible"] == 1 and gpu["index"] is not None
    assert all(r.telemetry for r in out.rows)  # NVML found the worker's GPU by its UUID
    assert {(r.gpu_index, r.gpu_uuid) for r in out.rows} == {(gpu["index"], gpu["uuid"])}
    assert receipt["phases"]["rows_measured"] == len(out.rows)


@two_gpus
def test_every_gpu_measures_in_its_own_worker(tmp_path):
    out, receipt = _run(tmp_path, "all", gpus="all")
    assert out.status == "complete" and {r.status for r in out.rows} == {Status.PASS}
    uuids = [g["uuid"] for g in receipt["gpus"]]
    assert len(uuids) == _device_count() == len(set(uuids)) and set(uuids) <= _nvml_uuids()
    assert all(g["devices_visible"] == 1 for g in receipt["gpus"])  # each worker saw its GPU alone
    assert {r.gpu_uuid for r in out.rows} == set(uuids)
    _check_groups(out.rows)


@two_gpus
def test_two_shards_merge_into_the_whole_plan(tmp_path):
    parts = [_run(tmp_path, f"shard{i}", shard=f"{i}/2", gpus=str(i))[0] for i in range(2)]
    assert cli.main(["merge", str(tmp_path / "merged"), str(tmp_path / "shard0.db"), str(tmp_path / "shard1.db"),
                     "--store", str(tmp_path / "m.db")]) == 0
    store = Store(tmp_path / "m.db")
    (run_id,) = list(store.runs()["run_id"])
    merged = store.results(run_id)
    assert sorted(zip(merged["problem"], merged["contract"], merged["implementation"])) == \
        sorted(c.key for c in make_plan(_exp()).cells)
    assert set(merged["status"]) == {"PASS"}
    assert len({g["uuid"] for g in store.run(run_id)["receipt"]["gpus"]}) == 2
    assert {r.gpu_uuid for p in parts for r in p.rows} == set(merged["gpu_uuid"])


@two_gpus
def test_the_dask_engine_measures_on_one_worker_per_gpu(tmp_path):
    pytest.importorskip("distributed")
    out, receipt = _run(tmp_path, "dask", cluster="local", gpus="all")
    assert out.status == "complete" and {r.status for r in out.rows} == {Status.PASS}
    assert receipt["placement"]["kind"] == "dask"
    assert len({g["uuid"] for g in receipt["gpus"]}) == 2 and all(g["devices_visible"] == 1 for g in receipt["gpus"])
    _check_groups(out.rows)
