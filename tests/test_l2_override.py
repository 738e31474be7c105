"""--l2 POLICY (run, build, profile) and gemmcompare.run(l2=...): the spec's timing.l2 replaced through
plan.narrow, so that the spec hash, the receipt, the rows and the tuning pick cache's key read the policy as if
the spec had said it (CPU only: the run goes to the fake GPU)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
from pathlib import Path

import pytest

import gemmcompare
from gemmcompare.build.experiment import ExperimentBuilds
from gemmcompare.cli import main
from gemmcompare.device import DeviceInfo
from gemmcompare.contracts.timing import L2_POLICIES
from gemmcompare.errors import InputError
from gemmcompare.plan import narrow
from gemmcompare.spec import load_spec
from gemmcompare.tuning.cache import pick_key
from gemmcompare.tuning.select import brief_settings
from test_first_answer import RUN_SPEC, _fake_cli, parent

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"  # timing: {l2: flush, target_noise: 0.01}


def _twin(tmp_path: Path, text: str, policy: str) -> Path:
    """A twin copy of a spec whose timing mapping does not name a policy, saying `l2: POLICY` in it."""
    assert text.count("timing: {") == 1 and "l2:" not in text
    path = tmp_path / f"twin_{policy}.yaml"
    path.write_text(text.replace("timing: {", f"timing: {{l2: {policy}, "))
    return path


def test_narrow_replaces_the_policy_and_gives_the_spec_a_hash_of_its_own(tmp_path):
    exp = load_spec(QUICKSTART)
    assert exp.timing.l2 == "flush"
    evicted = narrow(exp, l2="evict")
    # the timing as a twin spec that says `l2: evict` reads it; nothing else of the experiment moves
    twin = load_spec(_twin(tmp_path, QUICKSTART.read_text().replace("timing: {l2: flush, ", "timing: {"), "evict"))
    assert evicted.timing == twin.timing == dataclasses.replace(exp.timing, l2="evict")
    assert (evicted.problems, evicted.contracts, evicted.baseline) == (exp.problems, exp.contracts, exp.baseline)
    assert [i.name for i in evicted.implementations] == [i.name for i in exp.implementations]
    hashes = {policy: narrow(exp, l2=policy).spec_hash for policy in ("evict", "rotate", "warm")}
    assert len(set(hashes.values())) == 3 and exp.spec_hash not in hashes.values()
    # the spec's own policy is no narrowing: the same experiment, so a run --resumed without the flag matches
    same = narrow(exp, l2="flush")
    assert same.timing == exp.timing and same.spec_hash == exp.spec_hash
    # beside the other narrowings: a hash of its own, and theirs without --l2 stay what they were
    shapes = narrow(exp, "8x8x8", False, "cublas")
    legacy = f"{exp.spec_hash}|shapes=8x8x8|check_only=False|only=cublas"
    assert shapes.spec_hash == hashlib.sha256(legacy.encode()).hexdigest()
    both = narrow(exp, "8x8x8", False, "cublas", l2="evict")
    assert both.timing.l2 == "evict" and both.spec_hash not in {shapes.spec_hash, hashes["evict"]}


def test_the_pick_cache_key_follows_the_policy_as_a_twin_spec_would(tmp_path):
    """runner/picking.py keys a pick by executor.exp.timing.l2, and the race times under brief_settings(exp.timing):
    both read the narrowed experiment, so --l2 gives the key a spec that says the policy gives."""
    exp = load_spec(QUICKSTART)

    def key(e):
        return pick_key(gpu="NVIDIA H200", cc="sm_90", driver="580.65", problem={"m": 64, "n": 64, "k": 64, "batch": 1},
                        contract=e.contracts[0].describe(), tuned="cutlass.tuned[tune=auto]",
                        builds={"cutlass.a": "gc_cutlass_sm_90a_1111"}, l2=e.timing.l2)

    twin = load_spec(_twin(tmp_path, QUICKSTART.read_text().replace("timing: {l2: flush, ", "timing: {"), "evict"))
    assert key(narrow(exp, l2="evict")) == key(twin) != key(exp)
    assert key(narrow(exp, l2="flush")) == key(exp)
    assert brief_settings(narrow(exp, l2="evict").timing).l2 == "evict"
    assert brief_settings(narrow(exp, l2="rotate").timing).l2 == "flush"  # the race makes no input copies


def test_a_policy_that_is_not_one_is_an_input_error_naming_the_valid_ones():
    exp = load_spec(QUICKSTART)
    for bad in ("evicted", "", "FLUSH", "cold"):
        with pytest.raises(InputError) as info:
            narrow(exp, l2=bad)
        assert info.value.exit_code == 2 and all(p in str(info.value) for p in L2_POLICIES), str(info.value)
    with pytest.raises(InputError, match="did you mean evict"):
        narrow(exp, l2="evicted")


def _cli(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("command", ["run", "build", "profile"])
def test_a_bad_policy_exits_2_before_anything_is_done(tmp_path, capsys, command):
    store = tmp_path / "g.db"
    extra = ["--store", store, "--runs-dir", tmp_path / "runs"] if command == "run" else []
    rc, out, err = _cli([command, QUICKSTART, "--l2", "evicted", "--cache-dir", tmp_path / "cache", *extra], capsys)
    assert rc == 2, (out, err)
    assert "--l2 'evicted' is not an L2 policy" in err and "flush, evict, rotate, warm" in err
    assert "did you mean evict?" in err and "Traceback" not in err
    assert not store.exists() and not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_run_build_and_profile_take_l2_and_say_so_in_their_help():
    from gemmcompare.cli import build_parser

    subs = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name, sub in subs.items():
        helps = {opt: a.help for a in sub._actions for opt in a.option_strings}
        assert ("--l2" in helps) == (name in {"run", "build", "profile"}), name
    assert "changes nothing" in " ".join(subs["build"].format_help().split())
    assert "instead of the spec's timing.l2" in " ".join(subs["run"].format_help().split())


def test_a_run_under_l2_carries_it_in_its_receipt_rows_and_spec_hash(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "phases.yaml"
    spec.write_text(RUN_SPEC)  # timing: {row_timeout_s: 5}: the default policy, flush
    _fake_cli(monkeypatch)
    code = main(["run", str(spec), "--l2", "evict", "--store", str(tmp_path / "g.db"),
                 "--runs-dir", str(tmp_path / "runs"), "--no-progress", "--no-report"])
    out = capsys.readouterr().out
    assert code == 0, out
    (run_dir,) = (tmp_path / "runs").iterdir()
    receipt = json.loads((run_dir / "receipt.json").read_text())
    twin = load_spec(_twin(tmp_path, RUN_SPEC, "evict"))
    assert twin.timing.l2 == "evict"
    assert receipt["timing"] == {"method": "cuda_events", **twin.timing.as_dict()}  # as the twin's run would say
    assert receipt["spec_hash"] == narrow(load_spec(spec), l2="evict").spec_hash != load_spec(spec).spec_hash
    df, _ = gemmcompare.load(run_dir)
    timed = df[df["median_ms"].notna()]
    assert len(timed) == 4 and all(t["l2_policy"] == "evict" for t in timed["timing"])  # the worker's policy


def test_the_api_takes_l2_beside_shapes_and_only(monkeypatch):
    seen = []

    class Stop(Exception):
        pass

    def runner(exp, opts):
        seen.append(exp)
        raise Stop

    monkeypatch.setattr(parent, "Runner", runner)
    with pytest.raises(Stop):
        gemmcompare.run(QUICKSTART, shapes=[(8, 8, 8)], only="cublas", l2="warm")
    (exp,) = seen
    assert exp.timing.l2 == "warm" and exp.spec_hash == narrow(load_spec(QUICKSTART), "8x8x8", False, "cublas",
                                                                l2="warm").spec_hash
    with pytest.raises(InputError, match="not an L2 policy"):
        gemmcompare.run(QUICKSTART, l2="hot")
    assert len(seen) == 1  # refused before a Runner was made


def test_build_accepts_l2_and_builds_the_same_extensions(monkeypatch, capsys):
    seen = []

    def build_experiment(exp, device, **kw):
        seen.append(exp)
        return ExperimentBuilds(target_cc=90)

    monkeypatch.setattr("gemmcompare.build.experiment.build_experiment", build_experiment)
    monkeypatch.setattr("gemmcompare.device.probe_build_target", lambda: None)
    for extra in ([], ["--l2", "warm"]):
        assert main(["build", str(QUICKSTART), "--no-progress", *extra]) == 0
    plain, warm = seen
    assert warm.timing.l2 == "warm"

    def requests(exp):  # what a build is made of: the same implementations, problems, contracts
        return [(i.name, i.build_request(i.target_arch(90))) for i in exp.implementations]

    assert requests(plain) == requests(warm)
    assert (plain.problems, plain.contracts) == (warm.problems, warm.contracts)


def test_profile_passes_l2_to_the_driver_processes(tmp_path, monkeypatch, capsys):
    """`profile` times and profiles a row in processes of their own, which read the spec again: each gets
    --l2=POLICY and narrows as the command did (driver.main)."""
    from gemmcompare.profilers import driver, ncu

    seen = []

    def fake_run(cmd, capture_output, text, timeout):
        seen.append(cmd)
        if "--log-file" not in cmd:
            return types.SimpleNamespace(stdout='{"event_median_ms": 0.1}\n', stderr="", returncode=0)
        log = cmd[cmd.index("--log-file") + 1]
        Path(log).write_text('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                             + "".join(f'"{i}","k","gpu__time_duration.sum","usecond","100"\n' for i in range(2)))
        return types.SimpleNamespace(stdout="{}\n", stderr="", returncode=0)

    monkeypatch.setattr(ncu.subprocess, "run", fake_run)
    monkeypatch.setattr("gemmcompare.profilers.tools.find_tool", lambda name: "ncu")
    # a GPU to profile on, and its builds (profile builds before it profiles; nothing to build here)
    monkeypatch.setattr("gemmcompare.device.probe_device", lambda index=0: DeviceInfo("Fake H200", (9, 0), 132, 0, 0))
    monkeypatch.setattr("gemmcompare.build.experiment.build_experiment", lambda *a, **kw: ExperimentBuilds())
    rc, out, err = _cli(["profile", QUICKSTART, "--shapes", "8x8x8", "--only", "cublas", "--launches", "2",
                         "--l2", "warm"], capsys)
    assert rc == 0, (out, err)
    assert "profile: --l2 is warm; ncu's launches run with L2 warm" in out
    assert seen and all(cmd[-1] == "--l2=warm" for cmd in seen)
    assert any("--cache-control" in cmd and cmd[cmd.index("--cache-control") + 1] == "none" for cmd in seen)

    calls = []
    monkeypatch.setattr(driver, "drive", lambda *a, **kw: calls.append((a, kw)) or 0)
    assert driver.main(["s.yaml", "impl", "8x8x8", "f16_f32acc_tn", "0", "--timing-only", "--l2=warm"]) == 0
    assert driver.main(["s.yaml", "impl", "8x8x8", "f16_f32acc_tn", "2", "--no-timing"]) == 0
    (args, kw), (_, plain) = calls
    assert args == ("s.yaml", "impl", "8x8x8", "f16_f32acc_tn", 0) and kw == {"timing": True, "profile": False,
                                                                              "l2": "warm"}
    assert plain == {"timing": False, "profile": True, "l2": None}
