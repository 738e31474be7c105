"""Batched problems on the CPU: the draw (every matrix the 2-D draw of its own seed, with that draw's
references), the storage of batch-strided operands, the judge of every matrix (planted wrong outputs FAIL, an
honest one PASSes), a python callable's 3-D tensors, the ABI's batch fields from a fake extension, the custom
`batched:` declaration, the families' SKIP reasons, the spec's batch checks and the memory estimate."""

from pathlib import Path

import pytest
import torch

from gemmcompare.cli import main
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations import FIXED
from gemmcompare.implementations.user_module import import_module
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.executor import estimate_bytes
from gemmcompare.runner.inputs import make_draw
from gemmcompare.spec import load_spec, parse_spec

from fake_abi import FakeExtension

ROOT = Path(__file__).resolve().parents[1]
TN, NN = BUILTIN_CONTRACTS["f16_f32acc_tn"], BUILTIN_CONTRACTS["f16_f32acc_nn"]
TN_ALIGNED = BUILTIN_CONTRACTS["f16_f32acc_tn_aligned"]
P = GemmProblem(9, 7, 5, 4)  # odd sizes: aligned storage pads every matrix
SETTINGS = corr.CorrectnessSettings()


def _judge(out, draw, fixture="uniform"):
    return corr.check_output(out, draw.refs, TN, SETTINGS, P.k, fixture, draw.seed)


# -- the draw ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["uniform", "exact_integers", "adversarial"])
def test_each_matrix_is_the_2d_draw_of_its_seed_with_that_draws_references(fixture):
    draw = make_draw(fixture, P, TN, 11, "cpu")
    assert draw.operands.a.shape == (4, 9, 5) and draw.refs.rounded.shape == (4, 9, 7)
    for i in range(P.batch):
        one = make_draw(fixture, GemmProblem(9, 7, 5), TN, corr.batch_seed(11, i), "cpu")
        assert torch.equal(draw.operands.a[i], one.operands.a) and torch.equal(draw.operands.b[i], one.operands.b)
        for field in ("rounded", "original", "magnitude"):
            assert torch.equal(getattr(draw.refs, field)[i], getattr(one.refs, field))
    assert corr.batch_seed(11, 0) == 11  # matrix 0 is the 2-D problem's own draw
    assert len({corr.batch_seed(11, i) for i in range(1000)}) == 1000
    assert not any(torch.equal(draw.refs.rounded[0], draw.refs.rounded[i]) for i in range(1, P.batch))


def test_beta_c0_is_batched_and_the_bias_is_shared():
    scaled = parse_spec("name: t\nproblems: [{m: 9, n: 7, k: 5, batch: 4}]\ncontracts: [{name: sc, a: f16, c: f32, "
                        "layout: tn, alpha: 2, beta: 0.5}]\nimplementations: [library.cublas]\n", "t.yaml").contracts[0]
    draw = make_draw("uniform", P, scaled, 3, "cpu")
    assert draw.operands.c0.shape == (4, 9, 7)
    want = 2 * draw.operands.a[2].double() @ draw.operands.b[2].double() + 0.5 * draw.operands.c0[2].double()
    assert torch.allclose(draw.refs.rounded[2], want)
    bias_draw = make_draw("uniform", P, BUILTIN_CONTRACTS["f16_f32acc_bias_relu_tn"], 3, "cpu")
    assert bias_draw.operands.bias.shape == (7,)


@pytest.mark.parametrize("contract, storage_ld, batch_stride", [
    (TN, {"a": 5, "b": 5}, {"a": 45, "b": 35}),  # tight: one packed matrix apart
    (TN_ALIGNED, {"a": 8, "b": 8}, {"a": 16 * 8, "b": 16 * 8}),  # aligned: one padded allocation apart
])
def test_stored_operands_are_one_allocation_one_matrix_apart(contract, storage_ld, batch_stride):
    draw = make_draw("uniform", P, contract, 5, "cpu")
    for which, order in (("a", contract.order_a), ("b", contract.order_b)):
        t, ld = draw.operands.stored(which, order)
        assert ld == storage_ld[which] and t.stride() == (batch_stride[which], ld, 1)
    a, _ = draw.operands.stored("a", contract.order_a)
    assert torch.equal(a, draw.operands.a)
    assert draw.intact()
    a[-1, -1, -1] += 1  # a write into the last matrix of a laid-out copy is seen
    assert not draw.intact()


# -- the judge ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["uniform", "exact_integers"])
def test_an_honest_batched_output_passes(fixture):
    draw = make_draw(fixture, P, TN, 7, "cpu")
    out = torch.bmm(draw.operands.a.float(), draw.operands.b.float())
    check = _judge(out, draw, fixture)
    assert check.passed and check.message.startswith("all 4 matrices"), check.message


def _planted(name, out):
    if name == "first_only":  # the other matrices keep the poison
        out[1:] = float("nan")
    elif name == "zero_rest":
        out[1:] = 0.0
    elif name == "swapped":
        out[[1, 2]] = out[[2, 1]]
    elif name == "skips_last":
        out[-1] = float("nan")
    elif name == "last_stale":  # the last matrix holds the previous one's product
        out[-1] = out[-2]
    elif name == "one_element":
        out[3, 8, 6] += 1.0
    return out


@pytest.mark.parametrize("name, words", [
    ("first_only", "3 of 4 matrices fail (batch index 1, 2, 3)"), ("zero_rest", "batch index 1, 2, 3"),
    ("swapped", "2 of 4 matrices fail (batch index 1, 2)"), ("skips_last", "batch index 3); matrix 3: 63 non-finite"),
    ("last_stale", "batch index 3)"), ("one_element", "matrix 3: 1 of 63 elements outside the bound; worst at (8,6)"),
])
def test_planted_wrong_batched_outputs_fail(name, words):
    draw = make_draw("uniform", P, TN, 7, "cpu")
    out = _planted(name, torch.bmm(draw.operands.a.float(), draw.operands.b.float()))
    check = _judge(out, draw)
    assert not check.passed and words in check.message, check.message


def test_a_2d_output_for_a_batched_problem_fails():
    draw = make_draw("uniform", P, TN, 7, "cpu")
    check = _judge(draw.operands.a[0].float() @ draw.operands.b[0].float(), draw)
    assert not check.passed and "expected (4, 9, 7)" in check.message


# -- a python callable -------------------------------------------------------------------------------

SPEC = """\
name: t
problems: [{m: 9, n: 7, k: 5, batch: 4}]
contracts: [CONTRACT]
implementations:
  - library.cublas
  - python: {callable: "k.py:matmul", contract: CONTRACT}
"""

RECORDS = """\
import torch

seen = []


def matmul(a, b, c, alpha=1.0, beta=0.0):
    seen.append((tuple(a.shape), a.stride(), tuple(b.shape), b.stride(), tuple(c.shape), c.stride()))
    FILL
"""


def _callable_run(tmp_path, contract, fill="c.copy_(torch.bmm(a.float(), b.float()))"):
    (tmp_path / "k.py").write_text(RECORDS.replace("FILL", fill))
    exp = parse_spec(SPEC.replace("CONTRACT", contract), "t.yaml", base_dir=tmp_path)
    impl, under = exp.implementations[1], exp.contracts[0]
    assert impl.supports(P, under)
    draw = make_draw("uniform", P, under, 13, "cpu")
    prepared = impl.prepare(P, under, draw.operands, None)
    prepared.poison()
    prepared.launch()
    seen = import_module(str(tmp_path / "k.py")).seen
    return seen[-1], corr.check_output(prepared.output(), draw.refs, under, SETTINGS, P.k, "uniform", 13)


@pytest.mark.parametrize("contract, a_strides, b_strides, c_strides", [
    ("f16_f32acc_tn", (45, 5, 1), (35, 1, 5), (63, 7, 1)),
    ("f16_f32acc_nn", (45, 1, 9), (35, 1, 5), (63, 7, 1)),
    ("f16_f32acc_tt", (45, 5, 1), (35, 7, 1), (63, 7, 1)),
    ("f16_f32acc_tn_aligned", (128, 8, 1), (128, 1, 8), (16 * 8, 8, 1)),
])
def test_a_batched_callable_gets_3d_tensors_in_the_contracts_layouts(tmp_path, contract, a_strides, b_strides,
                                                                      c_strides):
    seen, check = _callable_run(tmp_path, contract)
    assert seen == ((4, 9, 5), a_strides, (4, 5, 7), b_strides, (4, 9, 7), c_strides)
    assert check.passed, check.message


@pytest.mark.parametrize("fill, words", [
    ("c[0].copy_(a[0].float() @ b[0].float())", "batch index 1, 2, 3"),
    ("c[:-1].copy_(torch.bmm(a[:-1].float(), b[:-1].float()))", "1 of 4 matrices fail (batch index 3)"),
    ("c.copy_(torch.bmm(a.flip(0).float(), b.flip(0).float()))", "4 of 4 matrices fail"),
])
def test_a_planted_batched_callable_fails(tmp_path, fill, words):
    _, check = _callable_run(tmp_path, "f16_f32acc_tn", fill)
    assert not check.passed and words in check.message, check.message


def test_torch_matmul_runs_a_batch_with_bmm():
    under = BUILTIN_CONTRACTS["f32_strict_tn"]
    draw = make_draw("uniform", P, under, 17, "cpu")
    prepared = FIXED["library.torch_matmul"]().prepare(P, under, draw.operands, None)
    prepared.poison()
    prepared.launch()
    assert "bmm" in prepared.notes
    assert corr.check_output(prepared.output(), draw.refs, under, SETTINGS, P.k, "uniform", 17).passed


# -- the C ABI and the custom declaration ------------------------------------------------------------

KERNEL = """\
#include "gemmcompare/gemm_abi.h"
extern "C" int my_entry(const gc_gemm_args* args, char* err, size_t err_len) { return 0; }
"""

CUSTOM = """\
name: t
problems: [{m: 9, n: 7, k: 5, batch: 4}, {m: 9, n: 7, k: 5}]
contracts: [f16_f32acc_tn]
implementations:
  - custom: {name: mine, sources: [k.cu], entry: my_entry, abi: ABI, contract: f16_f32acc_tn EXTRA}
"""


def _custom(tmp_path, abi="general", extra=""):
    (tmp_path / "k.cu").write_text(KERNEL)
    spec = tmp_path / "t.yaml"
    spec.write_text(CUSTOM.replace("ABI", abi).replace("EXTRA", extra))
    return spec


@pytest.mark.parametrize("contract, dims", [
    ("f16_f32acc_tn", [9, 7, 5, 5, 5, 7, 4, 45, 35, 63]),
    ("f16_f32acc_tn_aligned", [9, 7, 5, 8, 8, 8, 4, 16 * 8, 16 * 8, 16 * 8]),
])
def test_a_declared_custom_kernel_gets_the_batch_and_its_strides(tmp_path, contract, dims):
    exp = load_spec(_custom(tmp_path, extra=", batched: true"))
    impl, under = exp.implementations[0], BUILTIN_CONTRACTS[contract]
    assert impl.supports(P, under)
    draw, ext = make_draw("uniform", P, under, 19, "cpu"), FakeExtension()
    prepared = impl.prepare(P, under, draw.operands, ext)
    prepared.poison()
    prepared.launch()
    assert ext.log == [(dims, [])]
    assert corr.check_output(prepared.output(), draw.refs, under, SETTINGS, P.k, "uniform", 19).passed
    one = GemmProblem(9, 7, 5)  # a 2-D problem keeps the six dims of ABI 2 (the binding fills batch 1)
    impl.prepare(one, under, make_draw("uniform", one, under, 19, "cpu").operands, ext).launch()
    assert len(ext.log[-1][0]) == 6


def test_an_undeclared_custom_kernel_skips_a_batch_saying_what_to_declare(tmp_path):
    impl = load_spec(_custom(tmp_path)).implementations[0]
    skip = impl.supports(P, TN)
    assert not skip and "declare `batched: true`" in skip.reason and "gemm_abi.h" in skip.reason
    assert impl.supports(GemmProblem(9, 7, 5), TN)


def test_capstone_cannot_declare_batched(tmp_path, capsys):
    spec = _custom(tmp_path, abi="capstone", extra=", batched: true").as_posix()
    Path(spec).write_text(Path(spec).read_text().replace(", contract: f16_f32acc_tn", ""))
    assert main(["validate", spec]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:5" in err and "capstone ABI's solve() takes one matrix" in err


# -- the families' SKIP reasons, the spec, memory ----------------------------------------------------


TRITON_BATCHED = """\
import torch
from gemmcompare.implementations import triton_kernels as tk

torch.manual_seed(0)
for a_row in (True, False):
    for b_row in (True, False):
        for alpha, beta in ((1.0, 0.0), (2.0, 0.5)):
            batch, m, n, k = 3, 37, 29, 45
            a, b = torch.randn(batch, m, k).half(), torch.randn(batch, k, n).half()
            A = a if a_row else a.transpose(1, 2).contiguous().transpose(1, 2)
            B = b if b_row else b.transpose(1, 2).contiguous().transpose(1, 2)
            c0 = torch.randn(batch, m, n)
            c = c0.clone()
            tk.launch(A, B, c, alpha, beta, kernel=tk.matmul_kernel, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
            for i in range(batch):  # every matrix its own product: none left out, none read from another
                want = alpha * (a[i].double() @ b[i].double()) + beta * c0[i].double()
                err = (c[i].double() - want).abs().max().item()
                assert err < 1e-4, (a_row, b_row, alpha, beta, i, err)
print("batched triton ok")
"""


def test_the_triton_gemm_runs_a_batch_under_the_interpreter(tmp_path):
    """library.triton_matmul's kernel on 3-D operands (TRITON_INTERPRET=1, on the CPU): each matrix of the batch,
    every A/B order, alpha and beta."""
    pytest.importorskip("triton")
    import os
    import subprocess
    import sys

    script = tmp_path / "interp.py"
    script.write_text(TRITON_BATCHED)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "batched triton ok" in out.stdout, out.stdout + out.stderr


def test_the_triton_gemm_admits_a_batch():
    from gemmcompare.implementations.python_library import has_module

    if not has_module("triton"):
        pytest.skip("triton is not installed: the row's first SKIP says so")
    assert FIXED["library.triton_matmul"]().supports(P, TN)


@pytest.mark.parametrize("name, contract, words", [
    ("library.cublaslt_fp8", "e4m3_bf16out_f32acc_tn_tensor", "torch._scaled_mm takes 2-D operands only"),
    ("library.torch_compile_fp8", "e4m3_bf16out_f32acc_tn_tensor", "torch._scaled_mm takes 2-D operands only"),
])
def test_rows_that_cannot_batch_say_why(name, contract, words):
    from gemmcompare.implementations.python_library import has_module

    if "triton" in name or "compile" in name:
        if not has_module("triton"):
            pytest.skip("triton is not installed: the row's first SKIP says so")
    skip = FIXED[name]().supports(P, BUILTIN_CONTRACTS[contract])
    assert not skip and words in skip.reason


def test_batched_rows_of_the_library():
    assert FIXED["library.cublas"]().supports(P, TN)
    assert FIXED["library.torch_matmul"]().supports(P, TN)


def test_cutlass_sm90_runs_a_batch_as_its_l_mode_and_the_other_templates_skip_it(tmp_path):
    """sm90 configurations read the batch and its strides (the kernel's L mode: one launch); the binding hands
    them over as for any batched ABI kernel. sm80, CuTe, FP8 and grouped configurations SKIP a batch."""
    from gemmcompare.cutlass.catalog import lookup
    from gemmcompare.implementations.cutlass import CutlassKernel

    sm90 = CutlassKernel(lookup("sm90_coop_128x256x64_c1x1").config)
    assert sm90.batched and sm90.supports(GemmProblem(64, 64, 64, 4), sm90_contract(sm90))
    for name in ("sm80_128x256x32_3st", "cute_128x256x32_w2x4_4st", "sm90_fp8_coop_128x128x128_c1x1",
                 "sm90_grouped_coop_128x128x64_c1x1"):
        other = CutlassKernel(lookup(name).config)
        assert not other.batched, name
    draw, ext = make_draw("uniform", GemmProblem(64, 64, 64, 4), sm90_contract(sm90), 3, "cpu"), FakeExtension()
    prepared = sm90.prepare(GemmProblem(64, 64, 64, 4), sm90_contract(sm90), draw.operands, ext)
    prepared.launch()
    (dims, grouped), = ext.log
    assert dims[6:] == [4, 64 * 64, 64 * 64, 64 * 64] and grouped == []


def sm90_contract(kernel):
    """The built-in contract a catalog configuration was compiled for (its types and layout)."""
    return next(c for c in BUILTIN_CONTRACTS.values() if kernel.contract_support.check(c) and c.beta == 0.0
                and not c.is_fp8 and c.storage.value == "tight")


def test_handwritten_kernels_skip_a_batch_but_mma_sync_runs_it():
    exp = parse_spec("name: t\nproblems: [{m: 64, n: 64, k: 64, batch: 2}]\ncontracts: [f16_f32acc_tn]\n"
                     "implementations: [lab.wmma_global, {mma_sync: {}}, hopper.best]\n", "t.yaml")
    lab, mma, hopper = exp.implementations
    for impl in (lab, hopper):
        skip = impl.supports(exp.problems[0].problem, TN)
        assert not skip and "no batch axis" in skip.reason, (impl.name, skip)
    assert mma.batched and mma.supports(exp.problems[0].problem, TN)  # the grid's y walks the batch


def test_a_batch_over_the_grid_axis_limit_is_a_skip_and_the_index_width_is_per_matrix():
    """mma_sync and the Triton GEMM put the batch on a grid axis of at most 65535 blocks: a larger batch is a SKIP
    naming the limit, not a launch failure. Their 32-bit indices are within one matrix (the batch offsets are
    64-bit): a batch whose total elements pass 2^31 while each matrix stays under runs."""
    from gemmcompare.implementations.python_library import has_module

    exp = parse_spec("name: t\nproblems: [{m: 64, n: 64, k: 64}]\ncontracts: [f16_f32acc_tn]\n"
                     "implementations: [{mma_sync: {}}]\n", "t.yaml")
    mma, = exp.implementations
    rows = [mma] + ([FIXED["library.triton_matmul"]()] if has_module("triton") else [])
    for impl in rows:
        skip = impl.supports(GemmProblem(64, 64, 64, 65536), TN)
        assert not skip and "65535" in skip.reason and "grid" in skip.reason, (impl.name, skip)
        assert impl.supports(GemmProblem(64, 64, 64, 65535), TN), impl.name
        # 4096 matrices of 4096 x 256 elements: 2^32 in all, 2^20 each
        assert impl.supports(GemmProblem(4096, 4096, 256, 4096), TN), impl.name


@pytest.mark.parametrize("value", [0, -3, 1.5, "two"])
def test_a_spec_batch_that_is_not_a_positive_integer_is_exit_2_with_its_line(tmp_path, capsys, value):
    spec = tmp_path / "t.yaml"
    spec.write_text(f"name: t\nproblems:\n  - {{m: 8, n: 8, k: 8, batch: {value}}}\ncontracts: [f16_f32acc_tn]\n"
                    f"implementations: [library.cublas]\n")
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:3" in err and "batch must be a positive integer" in err


def test_the_example_spec_is_valid_and_its_label_carries_the_batch():
    exp = load_spec(ROOT / "experiments" / "byo_kernel" / "batched.yaml")
    assert [e.problem.label for e in exp.problems] == ["512x512x512x8", "1000x1000x256x3"]


def test_the_memory_estimate_counts_the_batch():
    one, eight = estimate_bytes(GemmProblem(512, 512, 512), TN, 3), estimate_bytes(GemmProblem(512, 512, 512, 8), TN, 3)
    chunks = 8 * 4 * 2048 * 512  # the checker's row chunks: one matrix's at a time
    assert eight - chunks == 8 * (one - chunks)


# -- compile tests -----------------------------------------------------------------------------------


@pytest.mark.compile
def test_the_example_batched_kernel_compiles(tmp_path, nvcc):
    from gemmcompare.build import toolchain

    impl = next(i for i in load_spec(ROOT / "experiments" / "byo_kernel" / "batched.yaml").implementations if i.family == "custom")
    req = impl.build_request("sm_80")
    for src in req.sources:
        res = toolchain.compile_object(Path(src.path), req.arch, tmp_path / (src.filename + ".o"),
                                       extra_flags=req.cuda_flags, include_dirs=req.include_dirs)
        assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


@pytest.mark.compile
@pytest.mark.torch_build
def test_library_cublas_with_its_strided_batched_call_compiles_against_torchs_headers(tmp_path):
    """cublas_gemm.cpp (cublasGemmStridedBatchedEx with the ABI's batch strides) compiles with the installed torch's
    headers, as the JIT build compiles it (a syntax-only pass: the binding that loads it is the generic one, built
    and imported with the ABI's version by test_custom.py's build of the worked example)."""
    import shutil
    import subprocess

    from torch.utils.cpp_extension import include_paths

    from gemmcompare.build import toolchain
    from gemmcompare.paths import ABI_INCLUDE_DIR

    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    source = FIXED["library.cublas"]().sources()[0].path
    dirs = [str(ABI_INCLUDE_DIR), *FIXED["library.cublas"]().include_dirs, *include_paths(),
            str(toolchain.cuda_home() / "include"), *toolchain.library_include_dirs()]
    # C++20: what the newest torch's cpp_extension passes (its headers need it); the floor's compile under it too
    done = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", *[f"-I{d}" for d in dirs], str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cublasGemmStridedBatchedEx" in source.read_text()
