"""A user's own FP8 kernel on the CPU: what `custom` and `python` entries declare (scalings, accumulation) and
which contracts that plans them under (SKIP rows with the reason), malformed declarations (exit 2 with
file:line), the scales a Python callable is called with and the scales the C ABI is handed, the FP8 starters
of `new-kernel`, and the example spec experiments/byo_kernel/fp8_own.yaml (its canary separates a kernel
that never promotes from one that does, emulated here as my_fp8_gemm.cu computes)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from gemmcompare.build import toolchain
from gemmcompare.cli import main
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Scaling
from gemmcompare.contracts.quantize import dequantize
from gemmcompare.errors import SpecError
from gemmcompare.implementations.base import AbiPrepared
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import make_draw
from gemmcompare.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[1]
BYO = ROOT / "experiments" / "byo_kernel"
STRICT, FAST = "e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc"
ROWCOL, BLOCK = "e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_block"
P = GemmProblem(256, 256, 256)

SPEC = f"""\
name: t
problems: [{{m: 256, n: 256, k: 256}}]
contracts: [{STRICT}, {FAST}, {ROWCOL}, {BLOCK}]
implementations:
  - library.cublaslt_fp8
  - ENTRY
"""
CUSTOM = "custom: {{name: k, sources: [my_fp8_gemm.cu], entry: my_fp8_gemm, abi: general, contract: {contract}{extra}}}"
PYTHON = 'python: {{name: k, callable: "my_fp8_matmul.py:matmul", contract: {contract}{extra}}}'


def entry(template: str, extra: str = "", contract: str = STRICT) -> str:
    return template.format(contract=contract, extra=extra)


def own(template: str, extra: str = "", contract: str = STRICT, base_dir: Path = BYO):
    exp = parse_spec(SPEC.replace("ENTRY", entry(template, extra, contract)), "t.yaml", base_dir=base_dir)
    return exp.implementations[1]


def issues(text: str, base_dir: Path = BYO) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(SPEC.replace("ENTRY", text), "t.yaml", base_dir=base_dir)
    return "\n".join(str(p) for p in info.value.problems)


def verdicts(impl) -> dict[str, str]:
    return {c: ("run" if (s := impl.supports(P, BUILTIN_CONTRACTS[c])) else s.reason) for c in (STRICT, FAST, ROWCOL, BLOCK)}


# -- what a declaration plans ---------------------------------------------------------------------------

@pytest.mark.parametrize("template", [CUSTOM, PYTHON])
def test_an_fp8_contract_without_declared_scalings_is_a_skip_that_says_what_to_declare(template):
    for contract, reason in verdicts(own(template)).items():
        assert reason != "run" and "declares none" in reason and "`scalings: [" in reason, (contract, reason)
        assert BUILTIN_CONTRACTS[contract].scaling.value in reason


@pytest.mark.parametrize("template", [CUSTOM, PYTHON])
def test_declared_scalings_and_promotion_run_strict_and_fastacc_contracts_of_those_scalings(template):
    got = verdicts(own(template, ", scalings: [tensor, rowcol]"))
    assert got[STRICT] == got[FAST] == got[ROWCOL] == "run"
    assert "scaling block not declared" in got[BLOCK] and "[tensor, rowcol]" in got[BLOCK]


@pytest.mark.parametrize("template", [CUSTOM, PYTHON])
def test_declared_fast_accumulation_is_a_skip_under_strict_contracts_only(template):
    got = verdicts(own(template, ", scalings: [tensor], accumulation: fast"))
    assert got[FAST] == "run"
    assert "accumulation: fast" in got[STRICT] and "its _fastacc twin allows it" in got[STRICT]


def test_the_declared_contract_still_fixes_types_and_layout():
    impl = own(CUSTOM, ", scalings: [tensor]")
    s = impl.supports(P, BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_tensor"])
    assert not s and "declared contract is e4m3_bf16out_f32acc_tn_tensor" in s.reason
    assert not impl.supports(P, BUILTIN_CONTRACTS["e5m2_bf16out_f32acc_tn_tensor"])
    assert "scales block/rowcol/tensor" not in impl.contracts_summary()
    assert "scales tensor, promoted (FP32) accumulation" in impl.contracts_summary()


def test_non_fp8_entries_are_unchanged():
    spec = SPEC.replace(f"[{STRICT}, {FAST}, {ROWCOL}, {BLOCK}]", "[f16_f32acc_tn]").replace("library.cublaslt_fp8", "library.cublas")
    exp = parse_spec(spec.replace("ENTRY", "custom: {name: g, sources: [my_gemm.cu], entry: solve}"), "t.yaml", base_dir=BYO)
    assert exp.implementations[1].supports(P, BUILTIN_CONTRACTS["f16_f32acc_tn"])


# -- malformed declarations: spec errors with the file and line --------------------------------------------

@pytest.mark.parametrize("template", [CUSTOM, PYTHON])
@pytest.mark.parametrize("extra, words", [
    (", scalings: [tensr]", "unknown scale shape 'tensr'; expected tensor, rowcol, block (did you mean 'tensor'?)"),
    (", scalings: tensor", "scalings must be a list of strings, got 'tensor'"),
    (", scalings: []", "scalings: list the scale shapes the kernel applies"),
    (", scalings: [tensor, tensor]", "names a scale shape twice"),
    (", scalings: [none]", "unknown scale shape 'none'"),
    (", scalings: [tensor], accumulation: fastacc", "accumulation must be one of ['promote', 'fast']"),
])
def test_a_malformed_declaration_names_the_file_and_line(template, extra, words):
    msg = issues(entry(template, extra))
    assert words in msg and "t.yaml:6" in msg, msg


@pytest.mark.parametrize("template", [CUSTOM, PYTHON])
def test_fp8_keys_beside_a_contract_that_is_not_fp8_are_an_error(template):
    msg = issues(entry(template, ", scalings: [tensor]", contract="bf16_bf16out_f32acc_tn"))
    assert "scalings: only for FP8 contracts" in msg and "t.yaml:6" in msg, msg
    msg = issues(entry(template, ", accumulation: fast", contract="bf16_bf16out_f32acc_tn"))
    assert "accumulation: only for FP8 contracts" in msg, msg


def test_scalings_on_the_capstone_abi_are_an_error():
    msg = issues("custom: {name: k, sources: [my_gemm.cu], scalings: [tensor]}")
    assert "the capstone ABI takes no FP8 scales" in msg and "use `abi: general`" in msg and "t.yaml:6" in msg


def test_a_callable_that_cannot_take_the_scales_is_an_error_at_its_line(tmp_path):
    (tmp_path / "k.py").write_text("def matmul(a, b, c, alpha=1.0, beta=0.0):\n    pass\n")
    text = 'python: {name: k, callable: "k.py:matmul", contract: ' + STRICT + ", scalings: [tensor]}"
    msg = issues(text, base_dir=tmp_path)
    assert "k.py:1" in msg and "scale_a=scale_a, scale_b=scale_b" in msg and "unexpected keyword argument" in msg, msg
    # declared for an FP8 contract it is only ever called with the scales: without scalings too
    msg = issues('python: {name: k, callable: "k.py:matmul", contract: ' + STRICT + "}", base_dir=tmp_path)
    assert "k.py:1" in msg and "scale_a=scale_a" in msg, msg


def test_the_cli_exits_2_on_a_malformed_declaration(tmp_path, capsys):
    (tmp_path / "my_fp8_gemm.cu").write_text((BYO / "my_fp8_gemm.cu").read_text())
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("ENTRY", entry(CUSTOM, ", scalings: [tensor], accumulation: slow")))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "s.yaml:6" in err and "accumulation must be one of" in err, err


# -- the scales a kernel is handed -----------------------------------------------------------------------

def _judge(prepared, draw, contract, problem, fixture="uniform"):
    prepared.poison()
    prepared.launch()
    assert draw.intact()
    return corr.check_output(prepared.output(), draw.refs, BUILTIN_CONTRACTS[contract], corr.CorrectnessSettings(),
                             problem.k, fixture)


@pytest.mark.parametrize("contract", [STRICT, ROWCOL])
def test_the_python_callable_gets_the_contracts_scales_and_passes(contract):
    impl = own(PYTHON, ", scalings: [tensor, rowcol]")
    p = GemmProblem(48, 40, 96)
    draw = make_draw("uniform", p, BUILTIN_CONTRACTS[contract], 3, "cpu")
    prepared = impl.prepare(p, BUILTIN_CONTRACTS[contract], draw.operands, None)
    assert prepared.scales["scale_a"] is draw.operands.scale_a and prepared.scales["scale_b"] is draw.operands.scale_b
    check = _judge(prepared, draw, contract, p)
    assert check.passed, check.message


def test_a_callable_that_ignores_the_scales_fails(tmp_path):
    (tmp_path / "k.py").write_text(textwrap.dedent("""\
        import torch

        def matmul(a, b, c, alpha=1.0, beta=0.0, **scales):
            c.copy_(torch.matmul(a.float(), b.float()))
        """))
    impl = own('python: {{name: k, callable: "k.py:matmul", contract: {contract}{extra}}}', ", scalings: [tensor]",
               base_dir=tmp_path)
    p = GemmProblem(48, 40, 96)
    draw = make_draw("uniform", p, BUILTIN_CONTRACTS[STRICT], 3, "cpu")
    check = _judge(impl.prepare(p, BUILTIN_CONTRACTS[STRICT], draw.operands, None), draw, STRICT, p)
    assert not check.passed and "outside the bound" in check.message


def test_a_non_fp8_callable_is_called_as_before(tmp_path):
    (tmp_path / "k.py").write_text("import torch\n\ndef matmul(a, b, c, alpha, beta):\n"
                                   "    torch.matmul(a.float(), b.float(), out=c)\n")
    spec = SPEC.replace(f"[{STRICT}, {FAST}, {ROWCOL}, {BLOCK}]", "[f16_f32acc_tn]")
    spec = spec.replace("ENTRY", 'python: {name: k, callable: "k.py:matmul", contract: f16_f32acc_tn}')
    impl = parse_spec(spec, "t.yaml", base_dir=tmp_path).implementations[1]
    p = GemmProblem(16, 24, 32)
    draw = make_draw("uniform", p, BUILTIN_CONTRACTS["f16_f32acc_tn"], 1, "cpu")
    prepared = impl.prepare(p, BUILTIN_CONTRACTS["f16_f32acc_tn"], draw.operands, None)
    assert prepared.scales == {}
    assert _judge(prepared, draw, "f16_f32acc_tn", p).passed


class _Recorder:
    """An extension whose entry records what AbiPrepared hands the binding (which fills gc_gemm_args from it)."""

    def __init__(self):
        self.calls = []

    def entry(self, symbol):
        return self

    def launch(self, *args):
        self.calls.append(args)


@pytest.mark.parametrize("contract, code", [(STRICT, 1), (ROWCOL, 2), (BLOCK, 3)])
def test_a_custom_kernel_is_handed_the_contracts_scales_through_the_abi(contract, code):
    impl = own(CUSTOM, ", scalings: [tensor, rowcol, block]")
    c = BUILTIN_CONTRACTS[contract]
    p = GemmProblem(40, 300, 260)
    draw = make_draw("uniform", p, c, 2, "cpu")
    ext = _Recorder()
    AbiPrepared(impl, p, c, draw.operands, ext).launch()
    (a, b, out, dims, codes, alpha, beta, ws, bias, sa, sb), = ext.calls
    assert codes[9] == code == Scaling(c.scaling).abi_code
    assert sa is draw.operands.scale_a and sb is draw.operands.scale_b
    want = {1: ((1, 1), (1, 1)), 2: ((40, 1), (1, 300)), 3: ((40, 3), (3, 3))}[code]  # gemm_abi.h's shapes
    assert (tuple(sa.shape), tuple(sb.shape)) == want and sa.is_contiguous() and sb.is_contiguous()


# -- the example spec, and the kernel arithmetic its canary judges ------------------------------------------

def test_the_example_spec_plans_every_own_row_under_both_contracts():
    from fake_device import DEVICE

    exp = load_spec(BYO / "fp8_own.yaml")
    names = {"library.cublaslt_fp8", "custom.my_fp8_gemm", "custom.my_fp8_gemm_unpromoted", "python.my_fp8_matmul"}
    assert {i.name for i in exp.implementations} == names
    for contract in exp.contracts:
        assert contract.name in (STRICT, FAST)
        for impl in exp.implementations_under(contract):
            for problem in exp.problems:
                s = impl.check(problem.problem, contract, DEVICE)
                assert s, (impl.name, contract.name, problem.problem.label, s.reason)


def _round14(x: np.ndarray) -> np.ndarray:
    """my_fp8_gemm.cu's accumulate() under -DNO_PROMOTION: 14 significant bits, round to nearest even."""
    u = x.astype(np.float32).view(np.uint32)
    u = (u + np.uint32(0x1FF) + ((u >> np.uint32(10)) & np.uint32(1))) & np.uint32(0xFFFFFC00)
    return u.view(np.float32)


def _emulate(draw, promote: bool) -> np.ndarray:
    """my_fp8_gemm.cu's arithmetic (per-tensor scales): FP32 partials of 128 k added into an FP32 total, or one
    14-bit partial over all of K; the scales in the epilogue."""
    ops = draw.operands
    a, b = ops.a.float().numpy(), ops.b.float().numpy()
    total = np.zeros((a.shape[0], b.shape[1]), np.float32)
    partial = np.zeros_like(total)
    for kk in range(a.shape[1]):
        product = np.outer(a[:, kk], b[kk, :]).astype(np.float32)  # exact: two 4-bit significands
        partial = (partial + product) if promote else _round14(partial + product)
        if promote and (kk + 1) % 128 == 0:
            total, partial = total + partial, np.zeros_like(partial)
    out = (total + partial) if promote else partial
    return out * (ops.scale_a.numpy()[0, 0] * ops.scale_b.numpy()[0, 0])


def test_the_canary_of_the_example_spec_fails_the_unpromoted_kernel_under_strict_only():
    exp = load_spec(BYO / "fp8_own.yaml")
    canary = next(p for p in exp.problems if p.name == "canary")
    assert canary.fixtures == ("fp8_accumulation",) and canary.problem.k == 16384
    p = GemmProblem(4, 6, canary.problem.k)  # every row of the fixture is alike: a few stand for 256
    strict, fast = BUILTIN_CONTRACTS[STRICT], BUILTIN_CONTRACTS[FAST]
    draw = make_draw("fp8_accumulation", p, strict, 5, "cpu")
    assert torch.equal(make_draw("fp8_accumulation", p, fast, 5, "cpu").operands.a.float(), draw.operands.a.float())

    def judge(c, contract):
        bf16 = torch.from_numpy(c).to(torch.bfloat16)  # the kernel's bf16 store
        return corr.check_output(bf16, draw.refs, contract, corr.CorrectnessSettings(), p.k, "fp8_accumulation")

    unpromoted, honest = _emulate(draw, promote=False), _emulate(draw, promote=True)
    lost = judge(unpromoted, strict)
    assert not lost.passed and lost.worst_bound_ratio > 1.5, lost.message
    assert judge(unpromoted, fast).passed
    for contract in (strict, fast):
        ok = judge(honest, contract)
        assert ok.passed and ok.worst_bound_ratio < 0.6, ok.message
    ref = dequantize(draw.operands.a, draw.operands.scale_a, Scaling.TENSOR, "a").numpy() @ \
        dequantize(draw.operands.b, draw.operands.scale_b, Scaling.TENSOR, "b").numpy()
    assert np.allclose(honest, ref, rtol=1e-6)


# -- new-kernel's FP8 starters ---------------------------------------------------------------------------

@pytest.mark.parametrize("abi, kernel", [("general", "custom.my_k"), ("python", "python.my_k")])
def test_new_kernel_fp8_writes_a_spec_judged_beside_cublaslt(tmp_path, abi, kernel):
    assert main(["new-kernel", "my_k", "--abi", abi, "--fp8", "--dir", str(tmp_path)]) == 0
    exp = load_spec(tmp_path / "my_k.yaml")
    assert [i.name for i in exp.implementations] == ["library.cublaslt_fp8", kernel]
    assert exp.baseline == "library.cublaslt_fp8"
    impl = exp.implementations[1]
    for contract in exp.contracts:
        assert contract.is_fp8 and impl.supports(GemmProblem(4096, 4096, 4096), contract), contract.name


def test_new_kernel_fp8_refuses_the_capstone_abi_and_python_keywords(tmp_path):
    assert main(["new-kernel", "my_k", "--fp8", "--dir", str(tmp_path)]) == 2
    assert main(["new-kernel", "lambda", "--abi", "python", "--dir", str(tmp_path)]) == 2
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("fp8", [False, True])
def test_the_python_starters_pass_on_the_cpu(tmp_path, fp8):
    assert main(["new-kernel", "my_k", "--abi", "python", "--dir", str(tmp_path)] + (["--fp8"] if fp8 else [])) == 0
    exp = load_spec(tmp_path / "my_k.yaml")
    impl = exp.implementations[1]
    for contract in exp.contracts:
        p = GemmProblem(48, 40, 160)
        draw = make_draw("uniform", p, contract, 4, "cpu")
        check = _judge(impl.prepare(p, contract, draw.operands, None), draw, contract.name, p)
        assert check.passed, (contract.name, check.message)


@pytest.mark.compile
def test_the_fp8_starter_and_the_example_kernel_compile_for_sm_90a(tmp_path):
    if not toolchain.nvcc_path().exists():
        pytest.skip("nvcc not found")
    assert main(["new-kernel", "my_k", "--abi", "general", "--fp8", "--dir", str(tmp_path)]) == 0
    builds = [(tmp_path / "my_k.cu", ())] + [(BYO / "my_fp8_gemm.cu", f) for f in ((), ("-DNO_PROMOTION",),
                                                                                  ("-DIGNORE_SCALES",))]
    for i, (src, flags) in enumerate(builds):
        res = toolchain.compile_object(src, "sm_90a", tmp_path / f"{i}.o", flags)
        assert res.returncode == 0, res.stderr + res.stdout
        assert "warning" not in res.stderr + res.stdout, res.stderr
