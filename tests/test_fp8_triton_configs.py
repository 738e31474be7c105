"""The Triton FP8 GEMM's configuration list (gemmcompare/implementations/triton_fp8_configs.py) on the CPU: every
entry is sound and says where it comes from, the autotuner and the spec see the same list, `{config: NAME}` runs
that entry, `{config: auto}` is a tuned row whose race picks among the entries, and one entry's tile loop computes
the right numbers under TRITON_INTERPRET=1. Nothing here measures a speed (no GPU)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest import mock

import pytest

from fake_device import DEVICE
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.contracts.timing import Measurement
from gemmcompare.errors import SpecError
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.base import Prepared
from gemmcompare.implementations.registry import InvalidConfig
from gemmcompare.implementations.triton_fp8_configs import BY_NAME, CONFIGS, NAMES, SOURCES, TritonFp8Config
from gemmcompare.problems import GemmProblem
from gemmcompare.runner import picking
from gemmcompare.runner.inputs import make_draw
from gemmcompare.runner.picking import RaceBench
from gemmcompare.spec import parse_spec
from gemmcompare.tuning.tuned import FAMILY_GRIDS

ROOT = Path(__file__).resolve().parents[1]
STRICT, FAST = "e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc"


def spec(entry: str, contracts=(STRICT, FAST)):
    return parse_spec(f"name: t\nproblems: [{{m: 4096, n: 4096, k: 4096}}]\ncontracts: [{', '.join(contracts)}]\n"
                      f"implementations:\n  - {entry}\n", "t.yaml")


# -- the list ---------------------------------------------------------------------------------------------------

def test_every_entry_is_sound_named_once_and_sourced():
    assert len(CONFIGS) == len(NAMES) == len(set(NAMES)) >= 12
    for c in CONFIGS:
        assert c.problems() == [], (c.name, c.problems())
        assert c.block_k <= 128  # a strict contract's promotion interval is one tl.dot
        assert c.sources and set(c.sources) <= set(SOURCES), c
        assert BY_NAME[c.name] is c and c.name == f"{c.block_m}x{c.block_n}x{c.block_k}_w{c.warps}_s{c.stages}_g{c.group_m}"
    # what issue 43 asks the list for: the 128x256 tiles that win with fast accumulation and the 8-warp 128x128
    # tiles that leave registers for the promoted partial sums, beside the tutorial's list it replaces
    assert {"128x256x128_w8_s4_g8", "128x256x128_w8_s3_g8", "128x128x128_w8_s3_g8", "256x128x64_w8_s4_g8"} <= set(NAMES)


@pytest.mark.parametrize("config, words", [
    (TritonFp8Config(128, 256, 256, 8, 3), "at most 128"),
    (TritonFp8Config(128, 128, 96, 8, 3), "must be 32, 64 or 128"),
    (TritonFp8Config(128, 256, 128, 4, 3), "256 FP32 sums per thread"),
    (TritonFp8Config(256, 256, 128, 8, 4), "262,144 bytes of shared memory"),
    (TritonFp8Config(128, 96, 64, 4, 3), "BLOCK_N=96 must be a power of two"),
    (TritonFp8Config(128, 128, 64, 2, 3), "num_warps=2"),
])
def test_what_cannot_compile_or_honour_a_strict_contract_says_why(config, words):
    assert any(words in p for p in config.problems()), config.problems()


@pytest.fixture
def real_kernels():
    """triton_fp8_kernels imported for one test, then forgotten again (other tests stand in for it by sys.modules,
    which a package attribute left behind would shadow)."""
    pytest.importorskip("triton")
    import gemmcompare.implementations as package

    name = "gemmcompare.implementations.triton_fp8_kernels"
    had = name in sys.modules
    from gemmcompare.implementations import triton_fp8_kernels
    yield triton_fp8_kernels
    if not had:
        sys.modules.pop(name, None)
        package.__dict__.pop("triton_fp8_kernels", None)


def test_the_autotuner_and_the_tuned_row_see_the_same_list(real_kernels):
    k = real_kernels

    assert [k.describe(c) for c in k.CONFIGS] == [
        f"BLOCK_M={c.block_m}, BLOCK_N={c.block_n}, BLOCK_K={c.block_k}, GROUP_M={c.group_m}, "
        f"num_warps={c.warps}, num_stages={c.stages}" for c in CONFIGS]
    assert FAMILY_GRIDS["library.triton_fp8"] == {"config": list(NAMES)}


# -- the spec -----------------------------------------------------------------------------------------------------

def test_named_plainly_it_is_the_autotuned_row_it_was():
    (impl,) = spec("library.triton_fp8").implementations
    assert impl.name == "library.triton_fp8" and impl.config is None


def test_one_entry_is_a_row_of_its_own_under_both_accumulations():
    (impl,) = spec("library.triton_fp8: {config: 128x128x128_w8_s3_g8}").implementations
    assert impl.name == "library.triton_fp8[config=128x128x128_w8_s3_g8]" and impl.config is BY_NAME["128x128x128_w8_s3_g8"]
    for name in (STRICT, FAST, "e4m3_f32out_f32acc_tn_rowcol"):
        assert impl.supports(GemmProblem(611, 613, 617), BUILTIN_CONTRACTS[name])
    s = impl.supports(GemmProblem(256, 256, 256), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"])
    assert not s and "block scales" in s.reason


def test_an_unknown_entry_is_a_spec_error_and_a_direct_caller_is_refused():
    with pytest.raises(SpecError, match="config must be one of"):
        spec("library.triton_fp8: {config: 128x256x128_w8_s5_g8}")
    with pytest.raises(InvalidConfig, match="not in the Triton FP8 list"):
        PARAMETRIZED["library.triton_fp8"].factory({"config": "nope"})


@pytest.mark.parametrize("entry", ["library.triton_fp8: {config: auto}", "library.triton_fp8: {tune: auto}"])
def test_config_auto_is_one_tuned_row_per_problem_over_the_whole_list(entry):
    (tuned,) = spec(entry).implementations
    assert tuned.name == "library.triton_fp8.tuned[tune=auto]"
    assert [c.config.name for c in tuned.candidates] == list(NAMES)
    assert tuned.supports(GemmProblem(4096, 4096, 4096), BUILTIN_CONTRACTS[STRICT])


def test_a_subset_of_the_list_can_be_tuned():
    (tuned,) = spec("library.triton_fp8: {tune: {config: [128x256x128_w8_s4_g8, 128x128x128_w8_s3_g8]}}").implementations
    assert [c.name for c in tuned.candidates] == ["library.triton_fp8[config=128x256x128_w8_s4_g8]",
                                                   "library.triton_fp8[config=128x128x128_w8_s3_g8]"]


# -- the prepared row: one entry reaches the launch ------------------------------------------------------------------

class _Kernels:
    """triton_fp8_kernels' launch, computed with torch on the CPU; records the configuration it was handed."""

    def __init__(self):
        self.fixed = []

    def launch(self, a, b, c, scale_a, scale_b, alpha, rowcol, fast_accum, fixed=None):
        self.fixed.append((fixed, fast_accum))
        c.copy_((alpha * (a.double() @ b.double()) * (scale_a.double() * scale_b.double())).to(c.dtype))


@pytest.mark.parametrize("contract", [STRICT, "e4m3_f32out_f32acc_tn_rowcol_fastacc"])
def test_a_fixed_entry_is_launched_with_its_configuration_and_the_contracts_accumulation(contract):
    c = BUILTIN_CONTRACTS[contract]
    p = GemmProblem(48, 40, 96)
    draw = make_draw("uniform", p, c, 3, "cpu")
    fake = _Kernels()
    impl = instantiate(PARAMETRIZED["library.triton_fp8"], {"config": "128x256x128_w8_s4_g8"})
    import gemmcompare.implementations as package

    # `from . import triton_fp8_kernels` reads the package's attribute once the real module was imported
    with mock.patch.dict("sys.modules", {"gemmcompare.implementations.triton_fp8_kernels": fake}), \
            mock.patch.object(package, "triton_fp8_kernels", fake, create=True):
        prepared = impl.prepare(p, c, draw.operands, None)
    assert fake.fixed[-1] == (BY_NAME["128x256x128_w8_s4_g8"], c.fast_accum)
    assert prepared.timing_fields["triton_config"] == "128x256x128_w8_s4_g8" and "compile_s" in prepared.timing_fields
    assert ("every BLOCK_K = 128" in prepared.notes) is not c.fast_accum
    prepared.poison()
    prepared.launch()
    assert fake.fixed[-1][0] is BY_NAME["128x256x128_w8_s4_g8"]
    check = corr.check_output(prepared.output(), draw.refs, c, corr.CorrectnessSettings(), p.k, "uniform", 3)
    assert check.passed, check.message


# -- the tuned row's pick: the harness's race chooses an entry ----------------------------------------------------------

FASTEST = "128x128x128_w8_s3_g8"


class _Timer:
    def __init__(self, settings, l2_bytes, **kwargs):
        pass

    def measure(self, launchers, stage=None):
        out = {}
        for ln in launchers:
            m = Measurement()
            m.samples_ms.extend([0.5 if FASTEST in ln.name else 1.0 + 0.01 * len(out)] * 5)
            out[ln.name] = m
        return out


class _Prepared(Prepared):
    def launch(self):
        pass

    def output(self):
        return None

    def poison(self):
        pass


def test_the_race_picks_the_fastest_entry_and_never_one_that_failed_its_check(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMCOMPARE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(picking, "Timer", _Timer)
    exp = spec("library.triton_fp8: {config: auto}", (FAST,))
    (tuned,) = exp.implementations
    wrong = f"library.triton_fp8[config={NAMES[0]}]"

    def check(impl, row, ext, draw, contract, k, fixture, *, emit, stage):
        if impl.name == wrong:  # a configuration whose output is wrong: its row goes nowhere, it cannot win
            row.status, row.reason = corr_fail()
            emit(row)
            return None
        return _Prepared()

    bench = RaceBench(exp=exp, run_id="run", device=DEVICE, builds={}, stage=lambda impl, what: None,
                      phase=lambda name: contextlib.nullcontext(), draw=lambda fixture, p, c: object(),
                      check=check, driver=lambda: None)
    picked = picking.pick(bench, tuned, exp.problems[0], exp.contracts[0])
    assert picked.winner.config.name == FASTEST and picked.name == "library.triton_fp8.tuned[tune=auto]"
    assert len(picked.tuning.race_ms) == len(NAMES) - 1 and "FAIL in its check" in picked.tuning.excluded[wrong]


def corr_fail():
    from gemmcompare.results import Status

    return Status.FAIL, "uniform: 12 of 1920 elements outside the bound"


# -- one entry's numbers, interpreted ----------------------------------------------------------------------------------

def test_one_entry_computes_the_contracts_answer_under_the_triton_interpreter():
    """128x256x128_w8_s4_g8 through fp8_matmul_kernel under TRITON_INTERPRET=1 (numpy on the CPU), with per-tensor
    and row/column scales and a ragged problem (M, N, K none a multiple of the tile): the tile loop, the masks, the
    grouped order and the scales give the contract's answer (the interpreter sums in FP32, so this does not judge
    the tensor cores' accumulation: the GPU tests do). In a fresh process: TRITON_INTERPRET is read at import."""
    pytest.importorskip("triton")
    script = textwrap.dedent("""
        import torch
        from gemmcompare.contracts import correctness as corr
        from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
        from gemmcompare.implementations import triton_fp8_kernels as k
        from gemmcompare.implementations.triton_fp8_configs import BY_NAME
        from gemmcompare.problems import GemmProblem
        from gemmcompare.runner.inputs import make_draw

        p = GemmProblem(150, 270, 300)
        for name in ("e4m3_f32out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_rowcol"):
            c = BUILTIN_CONTRACTS[name]
            draw = make_draw("normal", p, c, 5, "cpu")
            ops = draw.operands
            a, _ = ops.stored("a", c.order_a)
            b, _ = ops.stored("b", c.order_b)
            a, b = a.view(p.m, p.k), b.view(p.n, p.k).t()
            out = torch.full((p.m, p.n), float("nan"), dtype=torch.float32 if "f32out" in name else torch.bfloat16)
            k.launch(a, b, out, ops.scale_a, ops.scale_b, 1.0, "rowcol" in name, False, BY_NAME["128x256x128_w8_s4_g8"])
            check = corr.check_output(out, draw.refs, c, corr.CorrectnessSettings(), p.k, "normal", 5)
            print(name, check.passed, check.worst_bound_ratio)
            assert check.passed, check.message
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("True") == 2, run.stdout
