"""hopper.fp8's fast accumulation (`accumulation: fast`, the kernel's PROMOTE = false) on the CPU: the register
rules it changes, the contracts it is planned under (never a strict one, never block scales), what it renders,
and that a tuned row under a strict contract cannot pick it however fast it races. The kernel itself is compiled
by tests/test_hopper_compile.py and run by tests/test_gpu_fp8_hopper.py (on a device)."""

from __future__ import annotations

import contextlib

import pytest

from fake_device import DEVICE
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.contracts.timing import Measurement
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.base import Prepared
from gemmcompare.implementations.hopper import HopperConfig, HopperKernel
from gemmcompare.implementations.registry import InvalidConfig, UnbuildableImplementation
from gemmcompare.problems import GemmProblem
from gemmcompare.runner import picking
from gemmcompare.runner.picking import RaceBench
from gemmcompare.spec import parse_spec

C = BUILTIN_CONTRACTS
P = GemmProblem(4096, 4096, 4096)
FAST = {"accumulation": "fast", "block": [128, 256, 128], "stages": 4}
STRICT = ("e4m3_bf16out_f32acc_tn_tensor", "e4m3_f32out_f32acc_tn_rowcol", "e5m2_bf16out_f32acc_tn_tensor",
          "e4m3_bf16out_f32acc_tn_tensor_aligned")


def fp8(params) -> HopperKernel | UnbuildableImplementation:
    return instantiate(PARAMETRIZED["hopper.fp8"], params)


# -- the rules ----------------------------------------------------------------------------------------------

def test_one_register_set_lets_fast_accumulation_take_the_128x256_tile_promotion_cannot():
    fast = fp8(FAST)
    assert isinstance(fast, HopperKernel) and fast.config.fast, getattr(fast, "reason", "")
    promoting = fp8({**FAST, "accumulation": "promote"})
    assert isinstance(promoting, UnbuildableImplementation) and "promotion registers" in promoting.reason
    # 256x128 (two m64 blocks per consumer) is 128 sums per thread as well; 256x256 is past the rule
    assert isinstance(fp8({"accumulation": "fast", "block": [256, 128, 128], "stages": 4}), HopperKernel)
    wide = fp8({"accumulation": "fast", "block": [256, 256, 128], "stages": 2})
    assert isinstance(wide, UnbuildableImplementation) and "256 f32 accumulators" in wide.reason


@pytest.mark.parametrize("params, reason", [
    ({"accumulation": "fast", "overlap": 1}, "keeps no partial sums: overlap is 0"),
    ({**FAST, "stages": 5}, "279,632 bytes of shared memory"),  # 5 x 48 KB stages and the epilogue's 32 KB
    ({"accumulation": "fast", "block": [128, 256, 64], "stages": 4}, "BK is 128"),
])
def test_fast_configurations_it_cannot_build_are_skip_rows_with_the_reason(params, reason):
    impl = fp8(params)
    assert isinstance(impl, UnbuildableImplementation) and reason in impl.reason, getattr(impl, "reason", impl.name)


def test_accumulation_is_promote_or_fast_and_an_fp8_parameter_only():
    with pytest.raises(InvalidConfig, match="takes promote or fast"):
        HopperConfig("fp8", (128, 128, 128), 6, 2, 1, 8, accumulation="fastest").validate()
    with pytest.raises(InvalidConfig, match="takes only promote"):
        HopperConfig("best", (128, 256, 64), 4, 2, 2, 8, accumulation="fast").validate()
    assert PARAMETRIZED["hopper.best"].param("accumulation") is None
    assert PARAMETRIZED["hopper.fp8"].param("accumulation").choices == ("promote", "fast")


# -- the contracts it is planned under ------------------------------------------------------------------------

@pytest.mark.parametrize("name", STRICT)
def test_a_strict_contract_never_plans_the_unpromoted_kernel(name):
    support = fp8(FAST).supports(P, C[name])
    assert not support and "fast accumulation" in support.reason and f"contract {name} forbids it" in support.reason
    assert fp8({}).supports(P, C[name])  # the promoting kernel runs it


@pytest.mark.parametrize("name", ["e4m3_bf16out_f32acc_tn_tensor_fastacc", "e4m3_f32out_f32acc_tn_rowcol_fastacc",
                                  "e5m2_f16out_f32acc_tn_tensor_fastacc", "e4m3_bf16out_f32acc_tn_tensor_fastacc_aligned"])
def test_fastacc_contracts_run_it_with_tensor_and_row_column_scales(name):
    assert fp8(FAST).supports(GemmProblem(611, 613, 617), C[name])


@pytest.mark.parametrize("name", ["e4m3_bf16out_f32acc_tn_block_fastacc", "e4m3_bf16out_f32acc_tn_block"])
def test_block_scales_need_partial_sums_so_fast_accumulation_skips_them(name):
    for params in (FAST, {"accumulation": "fast"}):  # BN <= 128 too: it is the missing promotion, not the tile
        support = fp8(params).supports(P, C[name])
        assert not support and "scaling block not supported" in support.reason
        assert "accumulation fast keeps none" in support.reason


def test_a_spec_sweeping_accumulation_plans_fast_under_fastacc_only():
    exp = parse_spec("name: f\nproblems: [{m: 256, n: 256, k: 4096}]\n"
                     "contracts: [e4m3_bf16out_f32acc_tn_tensor, e4m3_bf16out_f32acc_tn_tensor_fastacc]\n"
                     "implementations:\n  - hopper.fp8: {accumulation: [promote, fast]}\n", "f.yaml")
    by_acc = {i.config.accumulation: i for i in exp.implementations}
    assert set(by_acc) == {"promote", "fast"}
    strict, fast_contract = exp.contracts
    assert by_acc["promote"].supports(exp.problems[0].problem, strict)
    assert by_acc["promote"].supports(exp.problems[0].problem, fast_contract)
    assert not by_acc["fast"].supports(exp.problems[0].problem, strict)
    assert by_acc["fast"].supports(exp.problems[0].problem, fast_contract)


# -- what it renders ------------------------------------------------------------------------------------------

def test_fast_renders_promote_false_and_says_so_in_its_name():
    impl = fp8(FAST)
    (src,) = impl.sources()
    sym = "gc_hopper_fp8_128x256x128_s4_c2_cm1_g8_fast"
    assert impl.entry_symbol == sym and impl.kernel_filter == f"{sym}_tag"
    assert f"gc::hopper::fp8::run<{sym}_config, {sym}_tag, false, false>(args, err, err_len)" in src.text
    assert f"gc::hopper::fp8::occupancy<{sym}_config, {sym}_tag, false, false>(args, out" in src.text
    assert "no promotion to FP32" in src.text.splitlines()[0] and "promoted" not in src.text.splitlines()[0]
    assert "accumulation=fast" in impl.name and impl.dynamic_smem_bytes() == 4 * 384 * 128 + 2 * 2 * 8192 + 64 + 1024


def test_promoting_rows_keep_their_names_and_sources():
    impl = fp8({})
    assert impl.name == "hopper.fp8[block=128x128x128,cluster_m=1,consumers=2,group=8,overlap=0,stages=6]"
    (src,) = impl.sources()
    assert "_tag>(args, err, err_len)" in src.text and "false" not in src.text
    assert ", true>(args, err, err_len)" in fp8({"overlap": 1}).sources()[0].text


# -- tuned: a strict contract's race never sees it ------------------------------------------------------------

class _Prepared(Prepared):
    def __init__(self, name):
        self.name = name

    def launch(self):
        pass

    def output(self):
        return None

    def poison(self):
        pass


def _race_ms(name: str) -> float:
    """Race medians: every fast candidate faster than every promoting one (as on the device, presumably)."""
    return 0.5 if "accumulation=fast" in name else 1.0 + ("stages=6" not in name) * 0.1


class _Timer:
    def __init__(self, settings, l2_bytes, **kwargs):
        pass

    def measure(self, launchers, stage=None):
        out = {}
        for ln in launchers:
            m = Measurement()
            m.samples_ms.extend([_race_ms(ln.name)] * 5)
            out[ln.name] = m
        return out


def _pick(tmp_path, monkeypatch, contract):
    monkeypatch.setenv("GEMMCOMPARE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(picking, "Timer", _Timer)
    exp = parse_spec(f"name: t\nproblems: [{{m: 4096, n: 4096, k: 4096}}]\ncontracts: [{contract}]\n"
                     "implementations:\n  - hopper.fp8: {tune: auto}\n", "t.yaml")
    (tuned,) = exp.implementations
    checked = []

    def check(impl, row, ext, draw, contract, k, fixture, *, emit, stage):
        checked.append(impl.name)
        return _Prepared(impl.name)

    bench = RaceBench(exp=exp, run_id="run", device=DEVICE, builds={}, stage=lambda impl, what: None,
                      phase=lambda name: contextlib.nullcontext(), draw=lambda fixture, p, c: object(),
                      check=check, driver=lambda: None)
    return picking.pick(bench, tuned, exp.problems[0], exp.contracts[0]), checked


def test_a_strict_tuned_row_never_checks_races_or_picks_a_fast_candidate(tmp_path, monkeypatch):
    picked, checked = _pick(tmp_path, monkeypatch, "e4m3_bf16out_f32acc_tn_tensor")
    assert checked and not any("accumulation=fast" in n for n in checked)
    assert not picked.winner.config.fast and "accumulation=fast" not in "".join(picked.tuning.race_ms)
    fast_out = {n: why for n, why in picked.tuning.excluded.items() if "accumulation=fast" in n}
    assert fast_out and all("forbids it" in why or "invalid configuration" in why for why in fast_out.values())


def test_a_fastacc_tuned_row_races_fast_and_promoting_candidates(tmp_path, monkeypatch):
    picked, checked = _pick(tmp_path, monkeypatch, "e4m3_bf16out_f32acc_tn_tensor_fastacc")
    raced = set(picked.tuning.race_ms)
    assert any("accumulation=fast" in n for n in raced) and any("accumulation=fast" not in n for n in raced)
    assert picked.winner.config.fast  # the fastest race median, as this fake timer has it
