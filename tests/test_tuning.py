"""Per-problem picks (gemmcompare/tuning, runner/picking.py) on the CPU: how a spec asks for them, the race,
the cache key, and that a tuned row's reported samples are not the ones it was picked on."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import pytest

from fake_device import DEVICE
from gemmcompare.cli import main
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.contracts.timing import Measurement, TimingSettings
from gemmcompare.implementations.base import Implementation, Ok, Prepared, Skip
from gemmcompare.results import Status
from gemmcompare.runner import picking
from gemmcompare.runner.executor import ProblemExecutor
from gemmcompare.runner.picking import RaceBench
from gemmcompare.spec import parse_spec
from gemmcompare.tuning.cache import PickCache, pick_key
from gemmcompare.tuning.select import Pick, narrow, race
from gemmcompare.tuning.tuned import Picked, TunedImplementation, build_name, with_candidates

SPEC = """
name: tuned
problems: [{m: 64, n: 4096, k: 4096}]
contracts: [bf16_bf16out_f32acc_tn]
implementations:
  - library.cublas
  - {ENTRY}
baseline: library.cublas
"""


def spec_with(entry: str):
    return parse_spec(SPEC.replace("{ENTRY}", entry), "tuned.yaml")


# -- the spec --------------------------------------------------------------------------------------------

def test_config_auto_is_one_row_per_contract_over_every_catalog_configuration_of_its_template():
    from gemmcompare.cutlass.catalog import catalog

    exp = spec_with("cutlass: {config: auto, template: sm90}")
    tuned = exp.implementations[1]
    assert isinstance(tuned, TunedImplementation)
    assert tuned.name == "cutlass.tuned[acc=f32,dtype=bf16,layout=tn,out=bf16,template=sm90,tune=auto]"
    sm90 = {n for n, e in catalog().items() if e.config.TEMPLATE == "sm90"}
    assert len(tuned.candidates) == len(sm90) > 5
    contract, problem = exp.contracts[0], exp.problems[0].problem
    for c in tuned.candidates:  # the contract's types, or an entry that fixes others: a SKIP there, never raced
        assert c.params.get("dtype") == "bf16" or not c.supports(problem, contract), c.name
    assert sum(c.params.get("dtype") == "bf16" for c in tuned.candidates) > len(sm90) // 2
    assert exp.row_count == 2  # cublas and the tuned row: the candidates are not rows


def test_a_contract_no_configuration_supports_is_a_skip_with_the_reason(capsys, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("{ENTRY}", "cutlass: {config: auto}").replace("bf16_bf16out_f32acc_tn", "e4m3_bf16out_f32acc_tn_rowcol"))
    assert main(["validate", "-v", str(spec)]) == 0
    out = capsys.readouterr().out
    # an FP8 contract names the row's types too (the sm90_fp8 entries take them: docs/fp8.md), and none of
    # its candidates takes row/column scales (the sm90_fp8 entries take per-tensor or block scales)
    line = next(ln for ln in out.splitlines() if "cutlass.tuned[acc=f32,dtype=e4m3,layout=tn,out=bf16,tune=auto] "
                                                 "under e4m3_bf16out_f32acc_tn_rowcol" in ln)
    assert "none of the" in line and "candidates can run it: inputs e4m3/e4m3 not supported" in line
    assert "scaling rowcol not supported" in line


def test_tune_lists_the_values_and_the_name_tells_two_grids_apart():
    one = spec_with("mma_sync: {layout: tn, tune: {stages: [3, 4], block: [[128, 128, 32], [64, 64, 64]]}}")
    tuned = one.implementations[1]
    assert len(tuned.candidates) == 4 and tuned.tuned == ("stages", "block")
    assert {c.params.get("stages") for c in tuned.candidates} >= {3, 4}
    other = spec_with("mma_sync: {layout: tn, tune: {stages: [2, 3], block: [[128, 128, 32], [64, 64, 64]]}}")
    assert other.implementations[1].name != tuned.name
    assert tuned.name.startswith("mma_sync.tuned[layout=tn,tune=stages+block@")


def test_tune_auto_uses_the_familys_grid():
    exp = spec_with("hopper.best: {tune: auto}")
    assert len(exp.implementations[1].candidates) == 8  # 4 blocks x 2 consumer counts


@pytest.mark.parametrize("entry, message", [
    ("mma_sync: {tune: {stagez: [2, 3]}}", "has no parameter 'stagez' to tune"),
    ("mma_sync: {stages: 3, tune: {stages: [2, 3]}}", "both fixed"),
    ("lab.wmma_staged: {tune: auto}", "has no grid of its own"),
    ("mma_sync: {tune: [2, 3]}", "tune must be `auto` or a mapping"),
    ("cutlass: {config: auto, tune: auto}", "not both"),
    ("mma_sync: {tune: {stages: [1, 2, 3, 4, 5, 6, 7, 8], group: [1, 2, 4, 8, 16, 32, 64, 128, 256]}}",
     "at most 64"),
])
def test_bad_tune_entries_are_exit_2_naming_the_key(tmp_path, capsys, entry, message):
    spec = tmp_path / "bad.yaml"
    spec.write_text(SPEC.replace("{ENTRY}", entry))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and "bad.yaml:" in err and "Traceback" not in err


def test_the_builder_builds_every_candidate_under_its_own_name():
    exp = spec_with("mma_sync: {layout: tn, tune: {stages: [3, 4]}}")
    names = [i.name for i in with_candidates(exp.implementations)]
    assert names[0] == "library.cublas" and len(names) == 3 and all(n.startswith("mma_sync[") for n in names[1:])


# -- the race, the pick and its cache -------------------------------------------------------------------

def test_narrow_keeps_the_fastest_predicted_and_every_unpredicted():
    predicted = {f"k{i}": float(i) for i in range(12)} | {"custom": None}
    raced, left = narrow(predicted, keep=3)
    assert raced == ["k0", "k1", "k2", "custom"] and set(left) == {f"k{i}" for i in range(3, 12)}


def test_nvidia_heuristics_second_opinion_races_what_it_ranks_first_too():
    """Where nvidia-matmul-heuristics is installed its estimates are a second opinion: a candidate goes out
    only when neither model ranks it among the first `keep` (at M <= 16 in the LLM study, the project's model
    and the race disagreed; a second model keeps more of the right candidates in)."""
    predicted = {f"k{i}": float(i) for i in range(6)} | {"custom": None}
    nvidia = {"k5": 0.1, "k4": 0.2, "k0": 0.9, "k1": 0.9, "k2": 0.9, "k3": 0.9, "not_a_candidate": 0.0}
    raced, left = narrow(predicted, keep=2, nvidia=nvidia)
    assert raced == ["k0", "k1", "k4", "k5", "custom"]
    assert set(left) == {"k2", "k3"}
    assert "nvidia-matmul-heuristics estimates 0.9000 ms" in left["k2"] and "the model predicts 2.0000 ms" in left["k2"]
    assert narrow(predicted, keep=2, nvidia={}) == narrow(predicted, keep=2)  # without it: as before


def test_race_picks_the_lowest_median_and_leaves_out_what_failed():
    got = {"a": Measurement(samples_ms=[1.0, 1.2, 5.0]), "b": Measurement(samples_ms=[1.1, 1.1, 1.1]),
           "c": Measurement(error=RuntimeError("boom"))}
    winner, medians, counts, failed = race(["a", "b", "c"], lambda names: got)
    assert winner == "b" and medians == {"a": 1.2, "b": 1.1} and counts == {"a": 3, "b": 3} and "boom" in failed["c"]


def _key(**changes):
    base = dict(gpu="NVIDIA H200", cc="sm_90", driver="580.65", problem={"m": 64, "n": 4096, "k": 4096, "batch": 1},
                contract=BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"].describe(), tuned="cutlass.tuned[tune=auto]",
                builds={"cutlass.a": "gc_cutlass_sm_90a_1111", "cutlass.b": "gc_cutlass_sm_90a_2222"}, l2="flush")
    return pick_key(**{**base, **changes})


def test_the_cache_key_changes_with_the_gpu_driver_problem_contract_build_and_l2_policy():
    key = _key()
    assert key == _key()
    changed = [_key(gpu="NVIDIA H100 80GB HBM3"), _key(driver="590.10"),
               _key(problem={"m": 128, "n": 4096, "k": 4096, "batch": 1}),
               _key(contract=BUILTIN_CONTRACTS["f16_f32acc_tn"].describe()),
               _key(builds={"cutlass.a": "gc_cutlass_sm_90a_1111", "cutlass.b": "gc_cutlass_sm_90a_3333"}),
               _key(l2="evict"), _key(l2="rotate")]
    assert len({key, *changed}) == 8


def test_the_pick_cache_keeps_a_pick_and_says_it_was_reused(tmp_path):
    cache = PickCache(tmp_path)
    pick = Pick("cutlass.b", {"cutlass.a": 0.02, "cutlass.b": 0.015}, {"cutlass.a": 5, "cutlass.b": 5}, seconds=3.2)
    assert cache.get("k") is None
    cache.put("k", pick, gpu="H200", driver="580", problem="64x4096x4096", contract="c", tuned="t")
    again = cache.get("k")
    assert again.winner == "cutlass.b" and again.cached and again.race_ms == pick.race_ms
    assert "reused from the pick cache" in again.note() and "tuned in" not in again.note()
    for f in tmp_path.glob("picks.sqlite*"):
        f.unlink()
    (tmp_path / "picks.sqlite").write_bytes(b"not a database" * 100)
    assert PickCache(tmp_path).get("k") is None  # unreadable: tune again, never fail the row


def test_an_earlier_calls_picks_merge_into_the_cache_without_replacing_its_own(tmp_path):
    """PICKS= on the device (experiments/studies/run_on_device.sh's seed_picks): an earlier call's picks.sqlite
    seeds this call's cache; a key both hold keeps this cache's pick; a file that is not a cache is an error."""
    earlier, here = PickCache(tmp_path / "earlier"), PickCache(tmp_path / "here")
    fast = Pick("cutlass.b", {"cutlass.a": 0.02, "cutlass.b": 0.015}, {"cutlass.a": 5, "cutlass.b": 5}, seconds=3.2)
    slow = Pick("cutlass.a", {"cutlass.a": 0.02, "cutlass.b": 0.025}, {"cutlass.a": 5, "cutlass.b": 5}, seconds=3.0)
    for key in ("k1", "k2"):
        earlier.put(key, fast, gpu="H100", driver="580", problem=key, contract="c", tuned="t")
    here.put("k2", slow, gpu="H100", driver="580", problem="k2", contract="c", tuned="t")
    assert here.merge(earlier.path) == 1
    assert here.get("k1").winner == "cutlass.b" and here.get("k1").cached
    assert here.get("k2").winner == "cutlass.a"  # its own pick stays
    assert here.merge(earlier.path) == 0  # nothing new the second time
    with pytest.raises(OSError, match="no such pick cache"):
        here.merge(tmp_path / "missing.sqlite")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(OSError, match="not a pick cache"):
        here.merge(tmp_path / "junk.sqlite")
    assert here.get("k1").winner == "cutlass.b"  # a failed merge leaves the cache as it was


def test_a_receipts_compressed_picks_merge_as_the_plain_file_does(tmp_path):
    """A receipt may keep its call's picks as picks.sqlite.xz (.picks/ is git-ignored and stays on one machine):
    PICKS= takes it as it is; a compressed file that is not a pick cache is an error naming it."""
    import lzma

    earlier, here = PickCache(tmp_path / "earlier"), PickCache(tmp_path / "here")
    pick = Pick("cutlass.b", {"cutlass.a": 0.02, "cutlass.b": 0.015}, {"cutlass.a": 5, "cutlass.b": 5}, seconds=3.2)
    earlier.put("k1", pick, gpu="H200", driver="580", problem="k1", contract="c", tuned="t")
    receipt = tmp_path / "receipt" / "picks.sqlite.xz"
    receipt.parent.mkdir()
    receipt.write_bytes(lzma.compress(earlier.path.read_bytes()))
    assert here.merge(receipt) == 1 and here.get("k1").winner == "cutlass.b" and here.get("k1").cached
    (tmp_path / "junk.sqlite.xz").write_bytes(lzma.compress(b"not a database" * 100))
    with pytest.raises(OSError, match="junk.sqlite.xz: not a pick cache"):
        here.merge(tmp_path / "junk.sqlite.xz")
    (tmp_path / "broken.sqlite.xz").write_bytes(b"not xz at all")
    with pytest.raises(OSError, match="broken.sqlite.xz: not a pick cache"):
        here.merge(tmp_path / "broken.sqlite.xz")


class FakePrepared(Prepared):
    """A prepared candidate on the CPU: each launch takes the next global launch number; its output is NaN
    for a wrong kernel (the check fails it)."""

    def __init__(self, kernel: "FakeKernel"):
        self.kernel, self.launches = kernel, []

    def launch(self):
        self.launches.append(next(LAUNCH))
        LAUNCHED.setdefault(self.kernel.name, []).append(self.launches[-1])

    def output(self):
        import torch

        return torch.full((2, 2), float("nan") if self.kernel.wrong else 1.0)

    def poison(self):
        pass


class FakeKernel(Implementation):
    """A candidate whose launch records a global launch number; its speed is its race figure."""

    family = "fake"

    def __init__(self, name: str, ms: float, wrong: bool = False, runs: bool = True, brief_ms: float | None = None):
        super().__init__(name)
        self.ms, self.wrong, self.runs, self.brief_ms = ms, wrong, runs, brief_ms

    def ms_under(self, settings) -> float:
        """Its speed; `brief_ms` where the brief race misreads it (a race's settings have BRIEF_MIN samples)."""
        from gemmcompare.tuning.select import BRIEF_MIN

        return self.brief_ms if self.brief_ms is not None and settings.min_samples == BRIEF_MIN else self.ms

    def supports(self, problem, contract):
        return Ok() if self.runs else Skip("tile does not fit")

    def prepare(self, problem, contract, operands, extension):
        return FakePrepared(self)


LAUNCH = itertools.count()
LAUNCHED: dict[str, list[int]] = {}


class FakeTimer:
    """Stands for Timer: launches each launcher `n` times (n: the settings' min_samples); sample i of a
    launcher is its kernel's speed scaled by its launch number (so no two launches give the same figure),
    and records which launch of which prepared object made it."""

    made: list["FakeTimer"] = []

    def __init__(self, settings, l2_bytes, **kwargs):
        self.n, self.settings = settings.min_samples, settings
        self.sampled: dict[str, list[int]] = {}  # launcher name -> launch numbers behind its samples
        self.samples: dict[str, list[float]] = {}
        self.prepared: dict[str, list] = {}  # launcher name -> the prepared object behind each sample
        FakeTimer.made.append(self)

    def measure(self, launchers, stage=None):
        out = {}
        for ln in launchers:
            m = Measurement()
            launch = ln.launches[0]
            for _ in range(self.n):
                launch()
                prepared = launch.__self__
                self.sampled.setdefault(ln.name, []).append(prepared.launches[-1])
                self.prepared.setdefault(ln.name, []).append(prepared)
                m.samples_ms.append(prepared.kernel.ms_under(self.settings) * (1 + 1e-4 * prepared.launches[-1]))
            self.samples[ln.name] = list(m.samples_ms)
            out[ln.name] = m
        return out

    def describe(self):
        return {"method": "fake"}


class FakeGroup:
    """The executor's side of a race on the CPU: the RaceBench it hands pick(), over a draw that is no draw
    and a check that fails the wrong kernel, as the real check does (its row to `emit`, no Prepared)."""

    def __init__(self, exp, builds):
        self.exp, self.builds = exp, builds
        self.stages = []

    def bench(self) -> RaceBench:
        return RaceBench(exp=self.exp, run_id="run", device=DEVICE, builds=self.builds, stage=self.stage,
                         phase=lambda name: contextlib.nullcontext(), draw=lambda fixture, p, contract: object(),
                         check=self.check, driver=lambda: None)

    def stage(self, impl, what):
        self.stages.append((impl, what))

    def check(self, impl, row, ext, draw, contract, k, fixture, *, emit, stage):
        stage(impl.name, f"check {fixture}")
        if impl.wrong:
            row.status, row.reason = Status.FAIL, "uniform: 4096 of 262144 elements outside the bound"
            emit(row)
            return None
        prepared = impl.prepare(None, contract, None, ext)
        prepared.launch()
        return prepared


@pytest.fixture
def tuned_setup(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(picking, "Timer", FakeTimer)
    FakeTimer.made.clear()
    LAUNCHED.clear()
    exp = spec_with("mma_sync: {layout: tn, tune: {stages: [3, 4]}}")
    cands = [FakeKernel("fast", 1.0), FakeKernel("slow", 2.0), FakeKernel("wrong", 0.1, wrong=True),
             FakeKernel("nofit", 0.5, runs=False)]
    tuned = TunedImplementation("fake", {}, ("variant",), "auto", cands)
    return exp, tuned, FakeGroup(exp, {})


def test_a_wrong_candidate_is_never_picked_and_leaves_no_row(tuned_setup):
    exp, tuned, group = tuned_setup
    picked = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    assert isinstance(picked, Picked) and picked.winner.name == "fake.fast" and picked.name == tuned.name
    assert build_name(picked) == "fake.fast"
    # a hang is blamed on the stage last reported: the tuned row's, never a candidate the parent does not know
    assert group.stages and all(impl == tuned.name and "fake." in what for impl, what in group.stages), group.stages
    assert "FAIL in its check" in picked.tuning.excluded["fake.wrong"]
    assert picked.tuning.excluded["fake.nofit"] == "tile does not fit"
    assert set(picked.tuning.race_ms) == {"fake.fast", "fake.slow"} and not picked.tuning.cached


class FakeDraw:
    """A draw on the CPU: nothing to fingerprint, nothing an implementation could write into."""

    operands, refs, seed = None, None, 7

    def fingerprint(self):
        return 0

    def intact(self):
        return True

    def unchanged_since(self, fingerprint):
        return True


@pytest.fixture
def cpu_executor(tuned_setup, monkeypatch):
    """A real ProblemExecutor, its GPU pieces stubbed: device memory, synchronization and the sleep kernel,
    the stream wait, the draw, and the correctness check (it passes a finite output, fails NaN). The race's
    timer and the executor's are both FakeTimers."""
    import torch
    from types import SimpleNamespace

    from gemmcompare.contracts import correctness, timing
    from gemmcompare.runner import executor

    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=None: (2**40, 2**40))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None)
    monkeypatch.setattr(executor, "wait_stream", lambda timeout_s, name: None)
    monkeypatch.setattr(executor, "draw_inputs", lambda fixture, p, contract, seed: FakeDraw())
    monkeypatch.setattr(timing, "Timer", FakeTimer)

    def check_output(out, refs, contract, settings, k, fixture, seed=None):
        passed = bool(torch.isfinite(out).all())
        return correctness.CheckResult(fixture, passed, "" if passed else "NaN in the output", 0.0, 0.0, 0.0, 0.0,
                                       0.0, 0 if passed else out.numel(), 0 if passed else out.numel(), seed)

    monkeypatch.setattr(correctness, "check_output", check_output)
    exp, tuned, _ = tuned_setup
    rows, stages = [], []
    ex = ProblemExecutor(exp, "run", DEVICE, {}, SimpleNamespace(), emit=rows.append,
                         stage=lambda impl, what: stages.append((impl, what)))
    return SimpleNamespace(exp=exp, tuned=tuned, executor=ex, rows=rows, stages=stages)


def test_a_tuned_rows_reported_samples_are_not_its_race_samples(cpu_executor):
    """The executor times the pick as a row of its own, from a fresh prepare: the samples it reports are
    its own timer's, made by launches of a prepared object the race never launched, after the race."""
    run = cpu_executor
    run.executor.run(run.exp.problems[0], run.exp.contracts[0], [run.tuned])
    (row,) = run.rows  # the tuned row only: no candidate's row (the wrong one failed its check in the race)
    assert row.implementation == run.tuned.name and row.status is Status.PASS, (row.status, row.reason)
    assert row.params["pick"] == "fake.fast"
    race_timer, report_timer = FakeTimer.made  # pick()'s, then the executor's
    race_samples, reported = race_timer.samples["fake.fast"], report_timer.samples[run.tuned.name]
    assert len(race_samples) == row.timing["tuning"]["race_samples"]["fake.fast"]
    assert row.samples_ms == reported and len(reported) == report_timer.n == row.n_samples
    assert set(row.samples_ms).isdisjoint(race_samples)
    race_launches, report_launches = race_timer.sampled["fake.fast"], report_timer.sampled[run.tuned.name]
    assert min(report_launches) > max(race_launches)
    race_prepared = {id(p) for p in race_timer.prepared["fake.fast"]}  # kept alive by the timer: ids stay unique
    assert not race_prepared & {id(p) for p in report_timer.prepared[run.tuned.name]}
    # a hang during the race is blamed on the tuned row, the only name the parent knows
    assert [what for impl, what in run.stages if impl != run.tuned.name] == []
    assert any("tuning, fake.wrong: check uniform" == what for _, what in run.stages), run.stages


def test_a_second_pick_comes_from_the_cache_without_a_race(tuned_setup):
    exp, tuned, group = tuned_setup
    first = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    races = len(FakeTimer.made)
    second = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    assert second.winner.name == first.winner.name and second.tuning.cached and len(FakeTimer.made) == races
    assert "reused from the pick cache" in second.tuning.note()


def test_no_runnable_candidate_is_the_tuned_rows_skip_or_build_error(tuned_setup):
    from gemmcompare.build.extension import BuildFailure

    exp, _, _ = tuned_setup
    tuned = TunedImplementation("fake", {}, ("variant",), "auto", [FakeKernel("a", 1.0), FakeKernel("b", 1.0)])
    builds = {"fake.a": BuildFailure(None, "a.cu(3): error: planted", "", 0.1),
              "fake.b": BuildFailure(None, "b.cu(3): error: planted", "", 0.1)}
    rows = []
    ex = ProblemExecutor(exp, "run", DEVICE, builds, None, emit=rows.append)
    assert ex._picked(tuned, exp.problems[0], exp.contracts[0]) is None
    assert rows[0].status is Status.BUILD_ERROR and "planted" in rows[0].reason and rows[0].implementation == tuned.name
    nothing = TunedImplementation("fake", {}, ("variant",), "auto", [FakeKernel("c", 1.0, runs=False)])
    assert ex._picked(nothing, exp.problems[0], exp.contracts[0]) is nothing  # admission writes its SKIP


def test_the_report_marks_a_tuned_row_with_its_pick():
    import pandas as pd

    from gemmcompare.report.tables import display_table, summary_table
    from test_report import make_rows

    rows = make_rows("r1", problems=[(64, 4096, 4096)])
    tuned = rows[-1]
    tuned.implementation = "cutlass.tuned[tune=auto]"
    tuned.params = {"tune": "auto", "pick": "cutlass.sm90_pp_64x128x64"}
    summary = summary_table(pd.DataFrame([r.to_record() for r in rows]))
    assert list(summary.loc[summary["implementation"] == tuned.implementation, "pick"]) == ["cutlass.sm90_pp_64x128x64"]
    shown = display_table(summary)["implementation"].tolist()
    assert "cutlass.tuned[tune=auto] (tuned: cutlass.sm90_pp_64x128x64)" in shown
    assert sum("(tuned:" in s for s in shown) == 1


def test_the_race_is_brief_and_never_rotates():
    from gemmcompare.tuning.select import BRIEF_MAX, BRIEF_MIN, brief_settings

    run = TimingSettings(l2="rotate", min_samples=50, max_samples=500, target_noise=0.005, method="cupti")
    race_settings = brief_settings(run)
    assert (race_settings.min_samples, race_settings.max_samples) == (BRIEF_MIN, BRIEF_MAX)
    assert race_settings.l2 == "flush" and race_settings.method == "cupti" and race_settings.target_noise == 0.0
    assert brief_settings(TimingSettings(l2="warm")).l2 == "warm"


def test_narrow_races_every_candidate_tied_with_the_last_one_kept():
    """The partial llm-shapes receipt: at 8192x6144x4096 the model gave every unsplit CUTLASS tile the same time
    and split-K ones less; a cut at `keep` by name left the 128x256 tiles (the prefill winners) out of the race,
    and the row read 79% of cuBLAS. Ties at the cut are all raced."""
    predicted = {"splitk2": 0.40, "splitk4": 0.41, "streamk": 0.42, **{f"tile{i:02d}": 0.5422 for i in range(11)},
                 "slow": 0.9}
    raced, left = narrow(predicted, keep=8)
    assert set(raced) == set(predicted) - {"slow"} and list(left) == ["slow"]
    raced, left = narrow({"a": 0.1, "b": 0.2, "c": 0.3}, keep=8)  # fewer than keep: all of them
    assert raced == ["a", "b", "c"] and not left


def test_nvidia_heuristics_estimates_cutlass_candidates_and_widens_the_race():
    """With the real nvidia-matmul-heuristics (installed with the test extra): each SM90 CUTLASS candidate of
    `config: auto` gets NVIDIA's estimate beside the project's prediction, and the race takes the candidates
    either ranks first (64x4096x4096: the project's model prefers split-K tiles, NVIDIA's the 64x64 ones)."""
    pytest.importorskip("nvMatmulHeuristics")
    from gemmcompare.tuning.select import KEEP_PREDICTED, _kept

    exp = spec_with("cutlass: {config: auto, template: sm90}")
    tuned = next(i for i in exp.implementations if isinstance(i, TunedImplementation))
    contract = exp.contracts[0]
    runnable = [(c, None) for c in tuned.candidates if c.check(exp.problems[0].problem, contract, DEVICE)]
    predicted, nvidia = picking._predicted(FakeGroup(exp, {}).bench(), runnable, exp.problems[0], contract)
    assert len(nvidia) >= 20 and set(nvidia) <= set(predicted) and all(ms > 0 for ms in nvidia.values())
    raced, left = narrow(predicted, nvidia=nvidia)
    ours = _kept({n: ms for n, ms in predicted.items() if ms is not None}, KEEP_PREDICTED)
    theirs = _kept(nvidia, KEEP_PREDICTED)
    assert theirs - ours, "the two models agree here: the test no longer shows the second opinion"
    assert set(raced) == ours | theirs | {n for n, ms in predicted.items() if ms is None}
    # a candidate left out gives NVIDIA's estimate where there is one (it has none for some tiles: 64x96)
    assert left and all(("nvidia-matmul-heuristics estimates" in why) == (name in nvidia) for name, why in left.items())
    assert any(name in nvidia for name in left)


# -- the runoff and the oracle (tuning/select.py) ----------------------------------------------------------


def test_contenders_are_the_races_closest_within_the_margin_and_none_alone():
    from gemmcompare.tuning.select import contenders

    medians = {"a": 1.00, "b": 1.09, "c": 1.11, "d": 1.02, "e": 1.05, "f": 1.08}
    assert contenders(medians) == ["a", "d", "e", "f"]  # within 10%, fastest first, four at most
    assert contenders(medians, margin=0.03) == ["a", "d"]
    assert contenders({"a": 1.0, "b": 1.5}) == [] and contenders({}) == []  # nothing close: no runoff


def test_the_runoff_uses_the_runs_protocol_capped_and_never_rotates():
    from gemmcompare.tuning.select import RUNOFF_MAX_MS, oracle_settings, runoff_settings

    run = TimingSettings(l2="rotate", min_samples=50, max_samples=500, target_noise=0.005, method="cupti",
                         max_ms=3000.0, energy_batches=7)
    r = runoff_settings(run)
    assert (r.min_samples, r.max_samples, r.target_noise, r.method) == (50, 500, 0.005, "cupti")
    assert r.max_ms == RUNOFF_MAX_MS and r.l2 == "flush" and r.energy_batches == 0
    o = oracle_settings(run)
    assert o.max_ms == 3000.0 and o.l2 == "flush" and o.min_samples == 50 and o.energy_batches == 0
    assert runoff_settings(TimingSettings(l2="evict")).l2 == "evict"


def test_a_runoff_overturns_a_race_that_misread_a_close_candidate(tuned_setup):
    """The race reads `misread` at 1.05 ms (it measures 0.90): within 10% of the race's winner, so the runoff
    times both again with the run's protocol and picks `misread`; the row's note and receipt say so."""
    exp, _, group = tuned_setup
    cands = [FakeKernel("fast", 1.0), FakeKernel("misread", 0.9, brief_ms=1.05), FakeKernel("slow", 2.0)]
    tuned = TunedImplementation("fake", {}, ("variant",), "auto", cands)
    picked = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    t = picked.tuning
    assert picked.winner.name == "fake.misread" and t.race_winner == "fake.fast"
    assert t.race_ms["fake.fast"] < t.race_ms["fake.misread"]  # the race had it the other way round
    assert set(t.runoff_ms) == {"fake.fast", "fake.misread"}  # slow (2x) was not re-measured
    assert t.runoff_samples["fake.misread"] == exp.timing.min_samples
    assert "runoff of the 2 closest, overturning the race's fake.fast" in t.note()
    race_timer, runoff_timer = FakeTimer.made
    assert runoff_timer.settings.min_samples == exp.timing.min_samples and set(runoff_timer.samples) == set(t.runoff_ms)


def test_a_clear_race_needs_no_runoff(tuned_setup):
    exp, tuned, group = tuned_setup  # fast 1.0 against slow 2.0
    picked = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    assert picked.tuning.runoff_ms == {} and picked.tuning.race_winner is None and len(FakeTimer.made) == 1
    assert "runoff" not in picked.tuning.note()


@pytest.fixture
def oracle_setup(tuned_setup, monkeypatch):
    """An oracle run whose model leaves `hidden` (the truly fastest) out of the race."""
    import dataclasses

    exp, _, _ = tuned_setup
    exp = dataclasses.replace(exp, timing=dataclasses.replace(exp.timing, oracle=True))
    cands = [FakeKernel("fast", 1.0), FakeKernel("slow", 2.0), FakeKernel("hidden", 0.8),
             FakeKernel("wrong", 0.1, wrong=True)]
    tuned = TunedImplementation("fake", {}, ("variant",), "auto", cands)
    monkeypatch.setattr(picking, "narrow", lambda predicted, nvidia=None: (
        [n for n in predicted if n != "fake.hidden"], {"fake.hidden": "the model predicts it slow"}))
    return exp, tuned, FakeGroup(exp, {})


def test_the_oracle_measures_every_checked_candidate_and_leaves_the_pick_alone(oracle_setup):
    exp, tuned, group = oracle_setup
    picked = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    t = picked.tuning
    assert picked.winner.name == "fake.fast"  # what the race picks, oracle or not
    assert "fake.hidden" not in t.race_ms and set(t.oracle_ms) == {"fake.fast", "fake.slow", "fake.hidden"}
    assert "fake.wrong" not in t.oracle_ms and "FAIL in its check" in t.excluded["fake.wrong"]  # never measured
    assert t.oracle_best == "fake.hidden" and t.oracle_gap == pytest.approx(t.oracle_ms["fake.fast"] /
                                                                           t.oracle_ms["fake.hidden"] - 1)
    assert 0.2 < t.oracle_gap < 0.3 and all(ci >= 0 for ci in t.oracle_ci_rel.values())
    oracle_timer = FakeTimer.made[-1]
    assert oracle_timer.settings.oracle and oracle_timer.settings.min_samples == exp.timing.min_samples
    assert "oracle over 3: best fake.hidden" in t.note() and "% slower" in t.note()
    receipt = t.as_dict()
    assert receipt["oracle_best"] == "fake.hidden" and receipt["oracle_gap"] == t.oracle_gap


def test_an_oracle_run_never_reuses_a_pick_and_a_reused_pick_carries_no_oracle_times(oracle_setup):
    import dataclasses

    exp, tuned, group = oracle_setup
    picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    again = picking.pick(group.bench(), tuned, exp.problems[0], exp.contracts[0])
    assert not again.tuning.cached and again.tuning.oracle_ms  # measured again
    plain = dataclasses.replace(exp, timing=dataclasses.replace(exp.timing, oracle=False))
    reused = picking.pick(FakeGroup(plain, {}).bench(), tuned, exp.problems[0], exp.contracts[0])
    assert reused.tuning.cached and reused.tuning.oracle_ms == {} and reused.tuning.oracle_gap is None
    assert "oracle" not in reused.tuning.note()


def test_a_cached_pick_from_before_the_runoff_still_reads(tmp_path):
    import json
    import sqlite3

    cache = PickCache(tmp_path)
    cache.put("k", Pick("cutlass.a", {"cutlass.a": 1.0}), gpu="g", driver=None, problem="p", contract="c", tuned="t")
    with sqlite3.connect(tmp_path / "picks.sqlite") as db:  # an older release's row: no runoff or oracle fields
        old = {"winner": "cutlass.a", "race_ms": {"cutlass.a": 1.0}, "race_samples": {}, "excluded": {},
               "predicted_ms": {}, "seconds": 1.0, "cached": False, "nvidia_ms": {}}
        db.execute("UPDATE picks SET pick = ?", (json.dumps(old),))
    got = cache.get("k")
    assert got.winner == "cutlass.a" and got.runoff_ms == {} and got.cached


def test_oracle_in_a_spec_and_on_the_command_line(tmp_path, capsys):
    from gemmcompare.plan import narrow as narrow_plan

    exp = parse_spec(SPEC.replace("{ENTRY}", "mma_sync: {layout: tn, tune: {stages: [3, 4]}}") +
                     "timing: {oracle: true}\n", "o.yaml")
    assert exp.timing.oracle and exp.timing.as_dict()["oracle"] is True
    plain = spec_with("mma_sync: {layout: tn, tune: {stages: [3, 4]}}")
    assert "oracle" not in plain.timing.as_dict()  # absent at its default: earlier specs keep their hashes
    flagged = narrow_plan(plain, oracle=True)
    assert flagged.timing.oracle and flagged.spec_hash != plain.spec_hash and ("oracle", "true") in flagged.narrowed
    assert narrow_plan(exp, oracle=True).spec_hash == exp.spec_hash  # the spec said it already
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.replace("{ENTRY}", "mma_sync: {layout: tn}") + "timing: {oracle: maybe}\n")
    assert main(["validate", str(bad)]) == 2
    assert "timing.oracle" in capsys.readouterr().err


def test_the_report_sets_each_pick_beside_the_oracles_best(tmp_path):
    import pandas as pd

    from gemmcompare.report import build_report
    from gemmcompare.report.picks import picks_section
    from gemmcompare.report.tables import summary_table
    from test_report import make_rows, receipt_for

    rows = make_rows("r1", problems=[(64, 4096, 4096), (128, 4096, 4096)])
    tuned = [r for r in rows if r.implementation != "library.cublas"][-2:]
    for row, (pick, ms) in zip(tuned, [("cutlass.a", {"cutlass.a": 1.0, "cutlass.b": 1.2}),
                                       ("cutlass.a", {"cutlass.a": 1.1, "cutlass.b": 1.0})]):
        row.implementation = "cutlass.tuned[tune=auto]"
        row.params = {"tune": "auto", "pick": pick}
        row.timing = {**(row.timing or {}), "tuning": Pick(pick, dict(ms), oracle_ms=dict(ms)).as_dict()}
    summary = summary_table(pd.DataFrame([r.to_record() for r in rows]))
    got = summary[summary["pick_gap"].notna()]
    assert {(b, round(g, 9)) for b, g in zip(got["oracle_best"], got["pick_gap"])} == {("cutlass.a", 0.0),
                                                                                     ("cutlass.b", 0.1)}
    section = picks_section(summary)
    assert "1 of 2 picks are the oracle's best; the largest gap is 10.0%" in section.markdown
    assert "(the pick)" in section.markdown and "gap %" in section.html
    plain = summary_table(pd.DataFrame([r.to_record() for r in make_rows("r2", problems=[(64, 4096, 4096)])]))
    assert picks_section(plain) is None and "pick_gap" not in plain  # no oracle: no section, no columns
    report = build_report((receipt_for("r1"), pd.DataFrame([r.to_record() for r in rows])), tmp_path / "r",
                          plots=[])
    assert "## Tuned picks against the oracle" in report.markdown.read_text()
    assert "Tuned picks against the oracle" in report.html.read_text()


def test_two_routings_of_one_token_count_do_not_share_a_pick():
    from gemmcompare.grouped import GroupedProblem
    from gemmcompare.problems import GemmProblem

    balanced, skewed = GroupedProblem(256, 512, (4, 4, 4, 4)), GroupedProblem(256, 512, (13, 1, 1, 1))
    assert balanced.m == skewed.m
    keys = {_key(problem=picking._problem_key(p)) for p in (balanced, skewed, GroupedProblem(256, 512, (4, 4, 4, 4),
                                                                                           "masked", 128))}
    assert len(keys) == 3
    assert picking._problem_key(GemmProblem(64, 4096, 4096)) == {"m": 64, "n": 4096, "k": 4096, "batch": 1}


def test_a_python_candidates_pick_key_follows_its_code_and_libraries(monkeypatch, tmp_path):
    """A candidate with no build (library.triton_fp8's configurations) is keyed by its modules' source and the
    torch and triton versions: a changed kernel file, or another triton, is a new pick."""
    import importlib.metadata as md

    from gemmcompare.implementations import PARAMETRIZED, instantiate, python_fp8

    one = instantiate(PARAMETRIZED["library.triton_fp8"], {"config": python_fp8.NAMES[0]})
    first = picking._build_id(one, None)
    assert first.startswith("python ") and first == picking._build_id(one, None)
    real = md.version
    monkeypatch.setattr(md, "version", lambda name: "9.9.9" if name == "triton" else real(name))
    assert picking._build_id(one, None) != first
    monkeypatch.setattr(md, "version", real)
    kernels = tmp_path / "implementations"
    kernels.mkdir()
    import gemmcompare.implementations as pkg

    for name in one.code_modules:
        (kernels / f"{name}.py").write_text((Path(pkg.__file__).parent / f"{name}.py").read_text())
    monkeypatch.setattr(pkg, "__file__", str(kernels / "__init__.py"))
    assert picking._build_id(one, None) == first  # the same sources: the same key
    (kernels / "triton_fp8_kernels.py").write_text("# changed\n")
    assert picking._build_id(one, None) != first
