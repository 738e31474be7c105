"""Scaling out (issue 17) without CUDA: shards of every committed spec, one worker per (fake) GPU fed whole
groups, crashed and hung workers, a GPU that cannot start, shards joined by merge, old stores, and the
Dask engine on a local CPU cluster (tests/fake_device.py stands in for the GPUs)."""

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from experiment_scripts import committed_specs
from fake_device import BACKEND, DEVICE, GPUS, fake_builds
from gemmcompare import cli, shards
from gemmcompare.errors import UsageError
from gemmcompare.plan import make_plan, narrow
from gemmcompare.results import Result, Status
from gemmcompare.runner import parent
from gemmcompare.runner.gpus import GpuChoice, select_gpus, uuid_text, visible_entry
from gemmcompare.runner.parent import Runner, RunOptions
from gemmcompare.spec import load_spec, parse_spec
from gemmcompare.store import Store

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
COMMITTED = committed_specs()

SPEC = """
name: fake-scale
problems:
  - sweep: {m: [256, 512, 1024, 2048], n: "=m", k: "=m"}
  - {m: 257, n: 263, k: 251, time: false}
contracts: [f16_f32acc_tn, f32_strict_tn]
implementations: [library.cublas, library.torch_matmul, lab.register_2d, lab.wmma_padded]
baseline: library.cublas
timing: {row_timeout_s: 1}
"""


def keys(rows) -> list[tuple]:
    return sorted((r.problem, r.contract, r.implementation) for r in rows)


def fake_run(tmp_path, monkeypatch, exp=None, name="run", failing=(), host_gpus=GPUS, **opts):
    monkeypatch.setattr(parent, "build_for", lambda exp, device, o: fake_builds(exp, failing))
    exp = exp or parse_spec(SPEC, "fake.yaml")
    options = RunOptions(store=tmp_path / f"{name}.db", runs_dir=tmp_path / name, progress=False, backend=BACKEND,
                         silence_margin_s=2.0, **opts)
    return Runner(exp, options, device=DEVICE, gpus=host_gpus).run()


def same_gpu_ratios(rows) -> None:
    """Every % of baseline comes from the baseline row of the same group, measured on the same GPU."""
    base = {(r.problem, r.contract): r for r in rows if r.is_baseline}
    checked = 0
    for r in rows:
        if r.pct_of_baseline is None:
            continue
        b = base[(r.problem, r.contract)]
        assert b.gpu_uuid == r.gpu_uuid, (r.implementation, r.problem, r.contract)
        assert r.pct_of_baseline == pytest.approx(100.0 * b.median_ms / r.median_ms)
        checked += 1
    assert checked


# -- shards -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", COMMITTED, ids=lambda p: p.name)
def test_shards_of_every_committed_spec_are_disjoint_complete_and_whole_groups(spec):
    plan = make_plan(load_spec(spec))
    every = [c.key for c in plan.cells]
    groups = shards.cell_groups(plan)
    for count in (1, 2, 3, 5):
        parts = [shards.shard_plan(plan, shards.Shard(i, count)) for i in range(count)]
        got = [c.key for p in parts for c in p.cells]
        assert sorted(got) == sorted(every), f"{count} shards: not complete or not disjoint"
        for p in parts:  # a group is never split between shards
            for key in {shards.group_key(c) for c in p.cells}:
                assert len([c for c in p.cells if shards.group_key(c) == key]) == len(groups[key])
        assert shards.assign(plan, count) == shards.assign(make_plan(load_spec(spec)), count)  # every host agrees
        loads = [sum(shards.cost(groups[k]) for k in {shards.group_key(c) for c in p.cells}) for p in parts]
        biggest = max(shards.cost(cells) for cells in groups.values())
        assert max(loads) <= sum(loads) / count + biggest  # greedy's bound: no shard carries much more


def test_the_sweep_splits_evenly_in_two():
    plan = make_plan(load_spec(EXPERIMENTS / "cutlass_sm90_sweep.yaml"))
    where = shards.assign(plan, 2)
    groups = shards.cell_groups(plan)
    loads = [sum(shards.cost(groups[k]) for k, s in where.items() if s == i) for i in range(2)]
    assert abs(loads[0] - loads[1]) <= 0.05 * sum(loads)


def test_groups_go_out_costliest_first():
    plan = make_plan(load_spec(EXPERIMENTS / "cutlass_sm90_sweep.yaml"))
    order = [g.entry.label for g in shards.by_cost(plan, list(plan.groups()))]
    assert order[:2] == ["8192x8192x8192"] * 2 and order[-2:] == ["611x613x617"] * 2


@pytest.mark.parametrize("text", ["", "1", "2/2", "-1/2", "0/0", "a/b", "1/2/3"])
def test_bad_shards_are_usage_errors(text):
    with pytest.raises(UsageError):
        shards.parse_shard(text)


# -- choosing GPUs ------------------------------------------------------------------------------------

def test_select_gpus():
    assert [g.index for g in select_gpus("all", GPUS)] == [0, 1]
    assert [g.index for g in select_gpus("1", GPUS)] == [1]
    assert select_gpus("0,1", []) == []  # no device: the run builds, then says so (exit 3)
    for bad in ("", "0,0", "2", "0;1", "gpu0", "-1"):
        with pytest.raises(UsageError):
            select_gpus(bad, GPUS)
    mixed = [GpuChoice(0, "0", "A100", (8, 0)), GpuChoice(1, "1", "H200", (9, 0))]
    with pytest.raises(UsageError, match="compute capability"):
        select_gpus("all", mixed)


def test_a_worker_is_shown_its_gpu_in_the_parents_own_numbering():
    assert visible_entry(1, {}) == "1"
    assert visible_entry(1, {"CUDA_VISIBLE_DEVICES": "3,5"}) == "5"
    assert visible_entry(0, {"CUDA_VISIBLE_DEVICES": "GPU-ab,GPU-cd"}) == "GPU-ab"
    assert uuid_text(bytes(range(16))) == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"


@pytest.mark.parametrize("argv", [["--gpus", "0,x"], ["--shard", "3/2"], ["--in-process", "--gpus", "all"],
                                  ["--cluster", "tcp://127.0.0.1:1", "--gpus", "0"]])
def test_bad_scaling_flags_exit_2_without_a_traceback(argv, capsys, tmp_path):
    code = cli.main(["run", str(EXPERIMENTS / "quickstart.yaml"), "--store", str(tmp_path / "s.db"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.startswith("gemmcompare: ")


# -- one worker per GPU -------------------------------------------------------------------------------

def test_two_gpus_share_the_groups_and_keep_every_ratio_inside_one_gpu(tmp_path, monkeypatch):
    out = fake_run(tmp_path, monkeypatch, gpus="all", failing=("lab.register_2d",))
    plan = make_plan(parse_spec(SPEC, "fake.yaml"))
    assert out.status == "complete"
    assert keys(out.rows) == sorted(c.key for c in plan.cells)  # every cell once
    assert {r.gpu_uuid for r in out.rows} == {"GPU-fake-0", "GPU-fake-1"}
    for (problem, contract) in {(r.problem, r.contract) for r in out.rows}:  # a group on one GPU
        assert len({r.gpu_uuid for r in out.rows if (r.problem, r.contract) == (problem, contract)}) == 1
    assert {r.status for r in out.rows if r.implementation == "lab.register_2d" and r.contract == "f32_strict_tn"} \
        == {Status.BUILD_ERROR}
    same_gpu_ratios(out.rows)
    store = Store(tmp_path / "run.db")
    receipt = store.run(out.run_id)["receipt"]
    assert sorted(g["uuid"] for g in receipt["gpus"]) == ["GPU-fake-0", "GPU-fake-1"]
    assert receipt["gpus"][0]["cuda_visible_devices"] in ("0", "1")  # set in the worker before it started
    assert receipt["phases"]["rows_measured"] == len(out.rows) and receipt["phases"]["measure_s"] > 0
    assert sum(g["rows"] for g in receipt["gpus"]) == len(out.rows)
    stored = store.results(out.run_id)
    assert set(stored["gpu_uuid"]) == {"GPU-fake-0", "GPU-fake-1"} and set(stored["gpu_index"]) == {0, 1}


def test_a_crashed_worker_costs_one_row_and_its_group_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_FAKE_FAULTS", "crash:library.torch_matmul@1024x1024x1024")
    monkeypatch.setenv("GEMMCOMPARE_FAKE_ONCE_DIR", str(tmp_path))
    out = fake_run(tmp_path, monkeypatch, gpus="all")
    rows = {(r.problem, r.contract, r.implementation): r for r in out.rows}
    assert out.status == "complete" and len(rows) == len(out.rows)
    crashed = [r for r in out.rows if r.status is Status.CRASH]
    assert len(crashed) == 1 and crashed[0].implementation == "library.torch_matmul"
    assert "died" in crashed[0].reason and crashed[0].gpu_uuid
    group = [r for r in out.rows if (r.problem, r.contract) == (crashed[0].problem, crashed[0].contract)]
    assert {r.status for r in group if r is not crashed[0]} <= {Status.PASS, Status.SKIP}
    assert len({r.gpu_uuid for r in group}) == 1  # the rest of its group on the same GPU, a fresh worker
    assert len(keys(out.rows)) == make_plan(parse_spec(SPEC, "fake.yaml")).row_count


def test_a_hung_worker_is_a_timeout_row(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_FAKE_FAULTS", "hang:lab.wmma_padded@512x512x512")
    monkeypatch.setenv("GEMMCOMPARE_FAKE_ONCE_DIR", str(tmp_path))
    out = fake_run(tmp_path, monkeypatch, gpus="all")
    hung = [r for r in out.rows if r.status is Status.TIMEOUT]
    assert [(r.implementation, r.problem) for r in hung] == [("lab.wmma_padded", "512x512x512")]
    assert "no word from the worker" in hung[0].reason
    assert out.status == "complete" and len(keys(out.rows)) == len(set(keys(out.rows)))


def test_a_gpu_whose_worker_cannot_start_leaves_its_groups_to_the_others(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_FAKE_BROKEN_GPU", "1")
    out = fake_run(tmp_path, monkeypatch, gpus="all")
    assert out.status == "complete"
    assert {r.gpu_uuid for r in out.rows} == {"GPU-fake-0"}
    assert len(out.rows) == make_plan(parse_spec(SPEC, "fake.yaml")).row_count
    receipt = Store(tmp_path / "run.db").run(out.run_id)["receipt"]
    assert any("fake GPU 1 is broken" in lost for lost in receipt["phases"]["gpus_lost"])


def test_when_no_gpu_can_start_the_run_fails_and_keeps_nothing_half_done(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_FAKE_BROKEN_GPU", "0")
    out = fake_run(tmp_path, monkeypatch, gpus="0")
    assert out.status == "failed" and out.rows == []


def test_an_interrupted_run_keeps_its_rows_stops_its_workers_and_resumes(tmp_path, monkeypatch):
    import multiprocessing

    emit = Runner._emit

    def interrupt_after_five(self, row):
        emit(self, row)
        if len(self.rows) == 5:
            raise KeyboardInterrupt  # as Ctrl-C in the parent, where rows arrive

    monkeypatch.setattr(Runner, "_emit", interrupt_after_five)
    first = fake_run(tmp_path, monkeypatch, gpus="all")
    assert first.status == "interrupted" and len(first.rows) == 5
    assert not multiprocessing.active_children()  # both GPUs' workers were stopped
    monkeypatch.setattr(Runner, "_emit", emit)
    second = fake_run(tmp_path, monkeypatch, gpus="all", resume=first.run_id)
    assert second.status == "complete"
    assert sorted(keys(first.rows) + keys(second.rows)) == sorted(c.key for c in make_plan(parse_spec(SPEC, "f")).cells)


# -- shards and merge ---------------------------------------------------------------------------------

def test_shards_merged_equal_the_unsharded_run(tmp_path, monkeypatch, capsys):
    whole = fake_run(tmp_path, monkeypatch, name="whole")
    parts = [fake_run(tmp_path, monkeypatch, name=f"shard{i}", shard=f"{i}/2", gpus=str(i)) for i in range(2)]
    assert sorted(keys(parts[0].rows) + keys(parts[1].rows)) == keys(whole.rows)
    assert not set(keys(parts[0].rows)) & set(keys(parts[1].rows))
    out = tmp_path / "merged"
    source = (tmp_path / "shard0.db").read_bytes()
    code = cli.main(["merge", str(out), str(tmp_path / "shard0.db"), str(tmp_path / "shard1" / parts[1].run_id),
                     "--store", str(tmp_path / "merged.db")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "shard0.db").read_bytes() == source  # a source store is read, never written
    store = Store(tmp_path / "merged.db")
    (run_id,) = list(store.runs()["run_id"])
    merged = store.results(run_id)
    got = sorted(zip(merged["problem"], merged["contract"], merged["implementation"]))
    assert got == keys(whole.rows)
    by_key = {(r.problem, r.contract, r.implementation): r.status.value for r in whole.rows}
    assert {k: s for k, s in zip(got, merged.sort_values(["problem", "contract", "implementation"])["status"])} \
        == by_key
    assert set(merged["run_id"]) == {run_id}
    receipt = store.run(run_id)["receipt"]
    assert sorted(g["uuid"] for g in receipt["gpus"]) == ["GPU-fake-0", "GPU-fake-1"]  # one receipt per GPU
    assert sorted(s["shard"]["index"] for s in receipt["merged_from"]) == [0, 1]
    assert (out / "results.json").exists() and (out / "receipt.json").exists()
    assert store.run(run_id)["status"] == "complete"


def test_merge_refuses_a_missing_shard_a_repeated_row_and_another_spec(tmp_path, monkeypatch, capsys):
    first = fake_run(tmp_path, monkeypatch, name="a", shard="0/3")
    fake_run(tmp_path, monkeypatch, name="b", shard="1/3")
    other = parse_spec(SPEC.replace("fake-scale", "other").replace("lab.wmma_padded", "lab.wmma_global"), "o.yaml")
    fake_run(tmp_path, monkeypatch, exp=other, name="c")
    cases = [
        ([tmp_path / "a.db", tmp_path / "b.db"], "shard 2/3 is missing"),
        ([tmp_path / "a.db", tmp_path / "a" / first.run_id], "twice"),
        ([tmp_path / "a.db", tmp_path / "c.db"], "spec"),
        ([tmp_path / "nowhere.db"], "no such"),
    ]
    for sources, words in cases:
        code = cli.main(["merge", str(tmp_path / "out"), *map(str, sources), "--store", str(tmp_path / "m.db")])
        err = capsys.readouterr().err
        assert code == 2 and words in err and "Traceback" not in err, (sources, err)
    assert cli.main(["merge", str(tmp_path / "out"), str(tmp_path / "a.db"), str(tmp_path / "b.db"),
                     "--allow-partial", "--store", str(tmp_path / "m.db")]) == 0
    assert Store(tmp_path / "m.db").runs()["status"].tolist() == ["partial"]
    receipt = json.loads((tmp_path / "out" / "receipt.json").read_text())
    assert receipt["partial"] == ["shard 2/3 is missing"]


# -- stores written before the GPU columns --------------------------------------------------------------

def test_an_old_store_gets_the_gpu_columns(tmp_path):
    path = tmp_path / "old.db"
    Store(path).close()
    conn = sqlite3.connect(path)  # as a store written before gpu_index and gpu_uuid existed
    conn.execute("ALTER TABLE results DROP COLUMN gpu_index")
    conn.execute("ALTER TABLE results DROP COLUMN gpu_uuid")
    conn.execute("INSERT INTO results (run_id, problem, status) VALUES ('old', '1x1x1', 'PASS')")
    conn.commit()
    conn.close()
    store = Store(path)
    row = Result("new", "2x2x2", 2, 2, 2, 1, "c", "i", "f", {}, Status.PASS, gpu_index=1, gpu_uuid="GPU-x")
    store.add_result(row)
    df = store.results()
    assert df.set_index("run_id").loc["new", "gpu_uuid"] == "GPU-x"
    assert pd.isna(df.set_index("run_id").loc["old", "gpu_uuid"])


# -- the Dask engine on a local CPU cluster -------------------------------------------------------------

def _needs_dask():
    pytest.importorskip("distributed", reason="the cluster engine is optional: pip install .[cluster]")


@pytest.fixture
def cpu_cluster():
    """Two Dask worker processes on this CPU, shown fake GPUs 0 and 1 (they inherit the environment as it
    is when the fixture starts them)."""
    _needs_dask()
    from gemmcompare.runner.engine_dask import local_cluster

    cluster = local_cluster(GPUS)
    yield cluster
    cluster.close()


@pytest.fixture
def faults(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMCOMPARE_FAKE_FAULTS", "kill_host:library.torch_matmul@1024x1024x1024")
    monkeypatch.setenv("GEMMCOMPARE_FAKE_ONCE_DIR", str(tmp_path))


def test_the_engine_measures_a_committed_specs_cells_on_a_cpu_cluster(tmp_path, monkeypatch, capfd):
    """--cluster local: a Dask scheduler and one Dask worker per (fake) GPU on this host, which keep
    distributed's INFO lines out of the run's output."""
    _needs_dask()
    exp = narrow(load_spec(EXPERIMENTS / "cutlass_sm90_sweep.yaml"), check_only=True)
    failing = (exp.implementations[3].name,)
    out = fake_run(tmp_path, monkeypatch, exp=exp, cluster="local", gpus="all", failing=failing)
    plan = make_plan(exp)
    assert out.status == "complete"
    assert keys(out.rows) == sorted(c.key for c in plan.cells)
    assert {r.gpu_uuid for r in out.rows} == {"GPU-fake-0", "GPU-fake-1"}
    for (problem, contract) in {(r.problem, r.contract) for r in out.rows}:  # a group on one GPU
        assert len({r.gpu_uuid for r in out.rows if (r.problem, r.contract) == (problem, contract)}) == 1
    assert {r.status for r in out.rows} == {Status.PASS, Status.SKIP, Status.BUILD_ERROR}
    assert {r.implementation for r in out.rows if r.status is Status.BUILD_ERROR} == set(failing)
    receipt = Store(tmp_path / "run.db").run(out.run_id)["receipt"]
    assert receipt["placement"]["kind"] == "dask" and len(receipt["gpus"]) == 2
    assert " - INFO - " not in capfd.readouterr().err


def test_the_engine_reruns_the_groups_of_a_killed_worker(tmp_path, monkeypatch, faults, cpu_cluster):
    out = fake_run(tmp_path, monkeypatch, cluster=cpu_cluster.scheduler_address, host_gpus=None)
    assert (tmp_path / "kill_host:library.torch_matmul@1024x1024x1024").exists()  # the worker was killed
    assert out.status == "complete"
    assert keys(out.rows) == sorted(c.key for c in make_plan(parse_spec(SPEC, "fake.yaml")).cells)
    assert not [r for r in out.rows if r.status in (Status.CRASH, Status.TIMEOUT)]
    same_gpu_ratios(out.rows)


def test_a_build_travels_to_a_worker_that_does_not_have_it(tmp_path, monkeypatch):
    """What a Dask task does on a host without the parent's build cache: unpack the shipped build."""
    from types import SimpleNamespace

    from gemmcompare.runner.engine_dask import _local_builds, pack_build
    from gemmcompare.runner.messages import BuiltExtensionRef, WorkerSetup

    from gemmcompare.build import cache_entry

    built = tmp_path / "parent-cache" / "gc_mod"
    built.mkdir(parents=True)
    for name, data in (("gc_mod.so", b"\x7fELF..."), ("complete", b""), ("resources.json", b"[]"),
                       ("build_seconds", b"12.5"), ("binding.o", b"not shipped")):
        (built / name).write_bytes(data)
    cache_entry.seal(built, cache_entry.entry_files("gc_mod"))  # as a finished build is
    ref = BuiltExtensionRef(SimpleNamespace(module_name="gc_mod"), built)
    setup = WorkerSetup(parse_spec(SPEC, "fake.yaml"), "r", 0, {"library.cublas": ref})
    packed = {"gc_mod": pack_build(ref)}
    assert _local_builds(setup, packed).builds["library.cublas"].folder == built  # same host: used where it is

    monkeypatch.setenv("GEMMCOMPARE_CACHE_DIR", str(tmp_path / "worker-cache"))
    elsewhere = WorkerSetup(setup.experiment, "r", 0, {"library.cublas": BuiltExtensionRef(ref.plan, tmp_path / "gone")})
    local = _local_builds(elsewhere, packed).builds["library.cublas"].folder
    assert local == tmp_path / "worker-cache" / "gc_mod"
    assert sorted(p.name for p in local.iterdir()) == ["build_seconds", "complete", "gc_mod.so", "manifest.json",
                                                      "resources.json"]
    assert (local / "gc_mod.so").read_bytes() == b"\x7fELF..."
    # the entry arrives whole, manifest included: this host's build cache takes it as it would its own
    assert cache_entry.damage(local, cache_entry.entry_files("gc_mod")) is None
    (local / "gc_mod.so").write_bytes(b"\x7fELF.")  # damaged later: refused, not loaded
    with pytest.raises(Exception, match="damaged"):
        _local_builds(elsewhere, packed)
    with pytest.raises(Exception, match="not on this worker"):
        _local_builds(WorkerSetup(setup.experiment, "r", 0, {"x": BuiltExtensionRef(SimpleNamespace(
            module_name="gc_other"), tmp_path / "gone")}), packed)


def test_the_device_scripts_judge_reads_every_pass_it_will_get(tmp_path, monkeypatch, capsys):
    """experiments/studies/scale-out/scale_out_on_device.sh ends in experiments/studies/scale-out/compare_passes.py, which reads the four
    passes' stores (one GPU, --gpus all, two shards merged, the Dask engine). Fed by the same passes on the
    fake GPUs, it finds every pass, the same rows and statuses as one GPU, every % of baseline within 3
    points of it (the fake's GPU 1 is 10% slower in time, not in ratio), and a rows/s figure for each."""
    from experiment_scripts import load_script

    _needs_dask()
    out = tmp_path / "out"
    out.mkdir()
    fake_run(out, monkeypatch, name="one", gpus="0")
    fake_run(out, monkeypatch, name="two", gpus="all")
    for i in range(2):
        fake_run(out, monkeypatch, name=f"shard{i}", shard=f"{i}/2", gpus=str(i))
    assert cli.main(["merge", str(out / "runs" / "merged-shards"), str(out / "shard0.db"), str(out / "shard1.db"),
                     "--store", str(out / "merged.db")]) == 0, capsys.readouterr().err
    fake_run(out, monkeypatch, name="cluster", cluster="local", gpus="all")
    judge = load_script("studies/scale-out/compare_passes.py")
    judge.main(out)
    summary = __import__("json").loads((out / "summary.json").read_text())
    passes, checks = summary["passes"], summary["checks"]
    assert all(passes[name] for name, _ in judge.PASSES), passes
    for name, entry in passes.items():
        assert entry["rows_per_s"] and entry["measure_s"], name
        if name != "one GPU":
            assert entry["same_rows"] and entry["same_statuses"] and entry["rows_over_3_points"] == 0, name
    assert passes["--gpus all"]["gpus"] == ["GPU-fake-0", "GPU-fake-1"]
    assert checks["no FAIL/CRASH/TIMEOUT/BUILD_ERROR in any pass"]
    assert checks["--gpus all: % of cuBLAS within 3 points of one GPU"]
    assert checks["shards + merge: the same rows as one GPU"]
