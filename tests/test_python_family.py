"""The Python-side implementations on the CPU: the `python` family's spec checks (each a clear error with
the spec's line and the module's file and line, exit 2), what the worker does with the module (import,
checks, the last frame of an exception), the calling convention, the built-in rows' contract support, the
Triton kernels under Triton's interpreter, and torch.compile of the contract's GEMM."""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

from gemmcompare.cli import main
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order
from gemmcompare.contracts.storage import Storage
from gemmcompare.errors import SpecError
from gemmcompare.implementations import FIXED
from gemmcompare.implementations.base import Operands
from gemmcompare.implementations.python_library import summarize_inductor_code
from gemmcompare.implementations.user_module import UserCodeError, describe_exception, import_module, load_callable
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import Draw
from gemmcompare.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "experiments" / "python_kernels"

SPEC = """\
name: t
problems: [{m: 64, n: 64, k: 64}]
contracts: [f16_f32acc_tn]
implementations:
  - library.cublas
  - python: {ENTRY}
"""

GOOD = """\
import torch


def matmul(a, b, c, alpha=1.0, beta=0.0):
    torch.mm(a.float(), b.float(), out=c)
"""


def module(tmp_path: Path, text: str, name: str = "k.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def issues(tmp_path: Path, entry: str) -> str:
    with pytest.raises(SpecError) as info:
        parse_spec(SPEC.replace("{ENTRY}", entry), "t.yaml", base_dir=tmp_path)
    return "\n".join(str(p) for p in info.value.problems)


def entry(callable_: str = "k.py:matmul", extra: str = "") -> str:
    return f'{{callable: "{callable_}", contract: f16_f32acc_tn{extra}}}'


# -- spec checks (validation reads the module, never runs it) -----------------------------------------


def test_example_spec_is_valid_and_names_its_rows():
    exp = load_spec(EXAMPLE / "python_kernels.yaml")
    names = [i.name for i in exp.implementations]
    assert names == ["library.cublas", "python.my_triton_gemm", "python.wrong_k_tail",
                     "python.my_triton_gemm[capture=never]"]


def test_missing_module_file(tmp_path):
    msg = issues(tmp_path, entry("nope.py:matmul"))
    assert "t.yaml:6" in msg and "module file not found: nope.py" in msg


def test_callable_needs_file_and_function(tmp_path):
    module(tmp_path, GOOD)
    assert "must be 'file.py:function'" in issues(tmp_path, entry("k.py"))
    assert "must be 'file.py:function'" in issues(tmp_path, entry("k.py:not-a-name"))


def test_missing_callable_suggests_the_nearest(tmp_path):
    module(tmp_path, GOOD)
    msg = issues(tmp_path, entry("k.py:matmull"))
    assert "t.yaml:6" in msg and "k.py has no top-level 'matmull' (did you mean 'matmul'?)" in msg


def test_missing_callable_lists_what_there_is(tmp_path):
    module(tmp_path, "def gemm(a, b, c, alpha=1.0, beta=0.0):\n    pass\n")
    assert "its top-level functions are gemm" in issues(tmp_path, entry("k.py:solve"))


@pytest.mark.parametrize("source, words", [
    ("matmul = 3\n", "k.py:1: matmul is bound to a constant, which cannot be called"),
    ("x = 1\nmatmul = [1, 2]\n", "k.py:2: matmul is bound to a list"),
    ("class matmul:\n    pass\n", "k.py:1: matmul is a class"),
    ("async def matmul(a, b, c, alpha=1.0, beta=0.0):\n    pass\n", "k.py:1: matmul is an `async def`"),
])
def test_not_callable(tmp_path, source, words):
    module(tmp_path, source)
    assert words in issues(tmp_path, entry())


@pytest.mark.parametrize("signature, words", [
    ("(a, b)", "too many positional arguments"),
    ("(a, b, c)", "got an unexpected keyword argument 'alpha'"),
    ("(a, b, c, alpha=1.0)", "got an unexpected keyword argument 'beta'"),
    ("(a, b, c, alpha, beta, stream)", "missing a required argument: 'stream'"),
    ("(a, b, c, *, alpha, beta, workspace)", "missing a required argument: 'workspace'"),
    ("(a, /, b, c, alpha, *, beta, extra)", "missing a required argument: 'extra'"),
])
def test_wrong_signature(tmp_path, signature, words):
    module(tmp_path, f"import torch\n\n\ndef matmul{signature}:\n    pass\n")
    msg = issues(tmp_path, entry())
    assert "t.yaml:6" in msg and "k.py:4: matmul" in msg and "cannot take the harness's call" in msg
    assert "matmul(a, b, c, alpha=alpha, beta=beta)" in msg and words in msg


def test_a_lambda_is_checked_too(tmp_path):
    module(tmp_path, "matmul = lambda a, b: None\n")
    assert "k.py:1: matmul(a, b) cannot take the harness's call" in issues(tmp_path, entry())


@pytest.mark.parametrize("signature", ["(a, b, c, alpha=1.0, beta=0.0)", "(a, b, c, alpha, beta)",
                                       "(a, b, c, **kw)", "(*args, **kwargs)", "(a, b, c, *, beta=0.0, alpha=1.0)"])
def test_signatures_that_take_the_call(tmp_path, signature):
    module(tmp_path, f"def matmul{signature}:\n    pass\n")
    exp = parse_spec(SPEC.replace("{ENTRY}", entry()), "t.yaml", base_dir=tmp_path)
    assert exp.implementations[1].name == "python.matmul"


def test_the_last_binding_counts(tmp_path):
    # def first, then rebound to a constant: the module ends up with the constant
    module(tmp_path, "def matmul(a, b, c, alpha=1.0, beta=0.0):\n    pass\n\n\nmatmul = None\n")
    assert "k.py:5: matmul is bound to a constant" in issues(tmp_path, entry())


@pytest.mark.parametrize("source", [
    "import triton\n\n\n@triton.jit\ndef matmul(a_ptr, b_ptr, c_ptr, M):\n    pass\n",
    "from triton import jit\n\n\n@jit\ndef matmul(a_ptr, b_ptr, c_ptr, M):\n    pass\n",
])
def test_a_triton_kernel_is_not_the_launcher(tmp_path, source):
    module(tmp_path, source)
    msg = issues(tmp_path, entry())
    assert "k.py:5: matmul is a Triton kernel" in msg and "launches it" in msg


def test_decorated_and_imported_bindings_are_left_to_the_worker(tmp_path):
    module(tmp_path, "import functools\n\n\n@functools.lru_cache\ndef matmul(a):\n    pass\n", "deco.py")
    module(tmp_path, "from helpers import matmul\n", "imp.py")
    for name in ("deco", "imp"):
        parse_spec(SPEC.replace("{ENTRY}", entry(f"{name}.py:matmul")), "t.yaml", base_dir=tmp_path)


def test_syntax_error_names_the_line(tmp_path):
    module(tmp_path, "def matmul(a, b, c, alpha=1.0, beta=0.0):\n    return (\n")
    msg = issues(tmp_path, entry())
    assert "k.py:2: syntax error" in msg or "k.py:3: syntax error" in msg


def test_not_a_python_file(tmp_path):
    (tmp_path / "k.cu").write_text("// CUDA\n")
    assert "k.cu is not a Python file (.py)" in issues(tmp_path, entry("k.cu:matmul"))


def test_contract_is_required_and_checked(tmp_path):
    module(tmp_path, GOOD)
    assert "contract: name the built-in contract" in issues(tmp_path, '{callable: "k.py:matmul"}')
    msg = issues(tmp_path, '{callable: "k.py:matmul", contract: f16_f32acc_nt_x}')
    assert "is not a built-in contract" in msg and "f16_f32acc_nt" in msg
    assert "no bias vector" in issues(tmp_path, '{callable: "k.py:matmul", contract: f16_f32acc_bias_relu_tn}')


def test_name_must_be_an_identifier(tmp_path):
    module(tmp_path, GOOD)
    assert "name must be an identifier" in issues(tmp_path, entry(extra=", name: my-gemm"))


def test_bare_family_name_is_a_spec_error_not_a_traceback(tmp_path, capsys):
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.replace("  - python: {ENTRY}\n", "  - python\n"))
    assert main(["validate", str(spec)]) == 2
    assert "callable: name the function as 'file.py:function'" in capsys.readouterr().err


@pytest.mark.parametrize("source, callable_, words", [
    (GOOD, "nope.py:matmul", "module file not found: nope.py"),
    (GOOD, "k.py:matmull", "has no top-level 'matmull'"),
    ("matmul = 42\n", "k.py:matmul", "k.py:1: matmul is bound to a constant"),
    ("def matmul(a, b):\n    pass\n", "k.py:matmul", "k.py:1: matmul(a, b) cannot take the harness's call"),
])
def test_validate_exits_2_with_the_reason_and_no_traceback(tmp_path, capsys, source, callable_, words):
    module(tmp_path, source)
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.replace("{ENTRY}", entry(callable_)))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert words in err and f"{spec}:6" in err and "Traceback" not in err


def test_names_and_capture_mode(tmp_path):
    module(tmp_path, GOOD)
    text = SPEC.replace("  - python: {ENTRY}\n", f"  - python: {entry()}\n  - python: {entry(extra=', name: g2, capture: never')}\n")
    exp = parse_spec(text, "t.yaml", base_dir=tmp_path)
    assert [i.name for i in exp.implementations[1:]] == ["python.matmul", "python.g2[capture=never]"]
    assert "capture must be one of" in issues(tmp_path, entry(extra=", capture: sometimes"))


# -- which contracts each row honours (SKIP with the reason otherwise) ----------------------------------


def _python_impl(tmp_path, extra=""):
    module(tmp_path, GOOD)
    return parse_spec(SPEC.replace("{ENTRY}", entry(extra=extra)), "t.yaml", base_dir=tmp_path).implementations[1]


def test_python_row_runs_its_declared_contract_only(tmp_path):
    impl = _python_impl(tmp_path)
    p = GemmProblem(64, 64, 64)
    assert impl.supports(p, BUILTIN_CONTRACTS["f16_f32acc_tn"])
    assert "declared contract is f16_f32acc_tn" in impl.supports(p, BUILTIN_CONTRACTS["f16_f32acc_tt"]).reason
    scaled = parse_spec(SPEC.replace("contracts: [f16_f32acc_tn]",
                                     "contracts: [{name: sc, a: f16, c: f32, layout: tn, alpha: 2, beta: 0.5}]")
                        .replace("{ENTRY}", entry()), "t.yaml", base_dir=tmp_path).contracts[0]
    assert "alpha_beta: true" in impl.supports(p, scaled).reason
    assert _python_impl(tmp_path, ", alpha_beta: true").supports(p, scaled)


@pytest.mark.parametrize("name", ["library.triton_matmul", "library.torch_compile"])
@pytest.mark.parametrize("contract, words", [
    ("f16_f32acc_tn", None), ("bf16_f32acc_tt", None), ("f16_f16out_f32acc_nt", None), ("bf16_bf16out_f32acc_nn", None),
    ("f32_strict_tn", "takes matching f16 or bf16 ("), ("f32_tf32_tn", "takes matching f16 or bf16"),
    ("f16_f16acc_tn", "accumulates in f32, not f16"), ("f16_f32acc_bias_relu_tn", "epilogue bias_relu"),
])
def test_builtin_rows_skip_what_they_cannot_honour(name, contract, words):
    s = FIXED[name]().supports(GemmProblem(256, 256, 256), BUILTIN_CONTRACTS[contract])
    assert bool(s) is (words is None)
    if words:
        assert words in s.reason


def test_strict_fp32_skip_says_why_per_row():
    strict = BUILTIN_CONTRACTS["f32_strict_tn"]
    p = GemmProblem(256, 256, 256)
    assert "TF32 by default, which a strict contract forbids" in FIXED["library.triton_matmul"]().supports(p, strict).reason
    assert "FP16/BF16 tensor-core GEMM" in FIXED["library.torch_compile"]().supports(p, strict).reason


def test_triton_row_skips_offsets_past_32_bits():
    s = FIXED["library.triton_matmul"]().supports(GemmProblem(65536, 65536, 64), BUILTIN_CONTRACTS["f16_f32acc_tn"])
    assert not s and "32-bit index type" in s.reason


# -- in the worker: import, checks after import, exceptions told by their last frame --------------------


def test_import_error_names_the_users_line(tmp_path):
    path = module(tmp_path, "import torch\nimport no_such_module_for_gemmcompare\n", "imp_fail.py")
    with pytest.raises(UserCodeError) as info:
        import_module(str(path))
    msg = str(info.value)
    assert "importing" in msg and "imp_fail.py:2 in <module>" in msg and "No module named" in msg


def test_module_imported_once_per_process_with_its_folder_on_the_path(tmp_path):
    module(tmp_path, "def scale():\n    return 3.0\n", "helpers_for_k.py")
    path = module(tmp_path, "from helpers_for_k import scale\n\n\ndef matmul(a, b, c, alpha=1.0, beta=0.0):\n"
                            "    c.copy_(scale() * (a.float() @ b.float()))\n", "uses_helper.py")
    assert import_module(str(path)) is import_module(str(path))
    assert load_callable(str(path), "matmul").__name__ == "matmul"


def test_signature_checked_after_import_when_the_source_could_not_tell(tmp_path):
    path = module(tmp_path, "import functools\n\n\ndef _matmul(a, b):\n    pass\n\n\nmatmul = functools.partial(_matmul)\n",
                  "partial.py")
    with pytest.raises(UserCodeError, match=r"cannot take the harness's call .*too many positional"):
        load_callable(str(path), "matmul")
    path = module(tmp_path, "matmul = sum\nnot_callable = 3 if True else len\n", "computed.py")
    with pytest.raises(UserCodeError, match="not_callable is a int, which cannot be called"):
        load_callable(str(path), "not_callable")


def test_exception_is_told_by_the_last_frame_in_the_users_file(tmp_path):
    path = module(tmp_path, """\
        import torch


        def matmul(a, b, c, alpha=1.0, beta=0.0):
            return _helper(a)


        def _helper(a):
            return torch.mm(a, torch.ones(3, 3))
        """, "frames.py")
    fn = load_callable(str(path), "matmul")
    try:
        fn(torch.ones(2, 2), None, None)
    except RuntimeError as exc:
        msg = describe_exception(exc, str(path), "matmul()")
    assert msg.startswith("matmul(): ") and "frames.py:9 in _helper" in msg and "RuntimeError" in msg


# -- the calling convention, on the CPU (no stream, no graph) ------------------------------------------


def _operands(m, n, k, dtype=torch.float16, c0=False, storage=Storage.TIGHT):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(m, k, generator=g).to(dtype)
    b = torch.randn(k, n, generator=g).to(dtype)
    return Operands(a, b, torch.randn(m, n, generator=g) if c0 else None, storage=storage)


def _prepare(tmp_path, source, contract="f16_f32acc_tn", extra="", c0=False, m=5, n=7, k=3, run_under=None):
    module(tmp_path, source)
    text = SPEC.replace("{ENTRY}", f'{{callable: "k.py:matmul", contract: {contract}{extra}}}')
    impl = parse_spec(text, "t.yaml", base_dir=tmp_path).implementations[1]
    under = BUILTIN_CONTRACTS[run_under or contract]
    assert impl.supports(GemmProblem(m, n, k), under)
    ops = _operands(m, n, k, c0=c0, storage=under.storage)
    return impl.prepare(GemmProblem(m, n, k), under, ops, None), ops


RECORDS = """\
import torch

seen = []


def matmul(a, b, c, alpha=1.0, beta=0.0):
    seen.append((tuple(a.shape), a.stride(), tuple(b.shape), b.stride(), tuple(c.shape), c.stride(), c.dtype,
                 alpha, beta))
    ab = alpha * (a.double() @ b.double())
    c.copy_(ab + beta * c.double() if beta != 0.0 else ab)  # with beta == 0, c holds the harness's NaN
"""


@pytest.mark.parametrize("contract, a_strides, b_strides", [
    ("f16_f32acc_tn", (3, 1), (1, 3)), ("f16_f32acc_tt", (3, 1), (7, 1)),
    ("f16_f32acc_nn", (1, 5), (1, 3)), ("f16_f32acc_nt", (1, 5), (7, 1)),
])
def test_callable_gets_logical_tensors_with_the_layouts_strides(tmp_path, contract, a_strides, b_strides):
    prepared, ops = _prepare(tmp_path, RECORDS, contract)
    prepared.poison()
    prepared.launch()
    seen = import_module(str(tmp_path / "k.py")).seen
    assert seen[-1] == ((5, 3), a_strides, (3, 7), b_strides, (5, 7), (7, 1), torch.float32, 1.0, 0.0)
    assert torch.allclose(prepared.output(), (ops.a.double() @ ops.b.double()).float())
    assert prepared.timing_fields["launch"] == "direct" and prepared.build_seconds is not None
    assert "first call" in prepared.notes and "k.py:matmul (sha256 " in prepared.notes


@pytest.mark.parametrize("declared", ["f16_f32acc_tn", "f16_f32acc_tn_aligned"])
def test_under_aligned_storage_every_operand_and_c_have_the_policys_leading_dimensions(tmp_path, declared):
    """C follows the storage policy like A and B (and like every other row's C): 16-byte rows under _aligned."""
    prepared, ops = _prepare(tmp_path, RECORDS, declared, run_under="f16_f32acc_tn_aligned")
    prepared.poison()
    prepared.launch()
    seen = import_module(str(tmp_path / "k.py")).seen
    # k = 3 halves pad to 8; n = 7 floats pad to 8 (4 floats are 16 bytes)
    assert seen[-1][:6] == ((5, 3), (8, 1), (3, 7), (1, 8), (5, 7), (8, 1))
    assert prepared.storage_info == {"policy": "aligned", "lda": 8, "ldb": 8, "ldc": 8, "copies_in_timing": []}
    assert torch.allclose(prepared.output(), (ops.a.double() @ ops.b.double()).float())
    tight, _ = _prepare(tmp_path, RECORDS, declared, run_under="f16_f32acc_tn")
    assert tight.storage_info["ldc"] == 7 and tight.c.stride() == (7, 1)


def test_alpha_beta_and_c0_reach_the_callable(tmp_path):
    module(tmp_path, RECORDS)
    text = SPEC.replace("contracts: [f16_f32acc_tn]", "contracts: [{name: sc, a: f16, c: f32, layout: tn, alpha: 2, beta: 0.5}]")
    text = text.replace("{ENTRY}", '{callable: "k.py:matmul", contract: f16_f32acc_tn, alpha_beta: true}')
    exp = parse_spec(text, "t.yaml", base_dir=tmp_path)
    ops = _operands(4, 6, 8, c0=True)
    prepared = exp.implementations[1].prepare(GemmProblem(4, 6, 8), exp.contracts[0], ops, None)
    prepared.poison()  # NaN, then C0 again: beta reads C0
    prepared.launch()
    want = 2.0 * (ops.a.double() @ ops.b.double()) + 0.5 * ops.c0.double()
    assert torch.allclose(prepared.output().double(), want, atol=1e-5)


def test_returning_a_new_tensor_is_an_error_that_says_so(tmp_path):
    with pytest.raises(UserCodeError, match="returned a new tensor: write the result into c"):
        _prepare(tmp_path, "def matmul(a, b, c, alpha=1.0, beta=0.0):\n    return a.float() @ b.float()\n")


def test_returning_c_itself_is_fine(tmp_path):
    prepared, _ = _prepare(tmp_path, "def matmul(a, b, c, alpha=1.0, beta=0.0):\n"
                                     "    return c.copy_(a.float() @ b.float())\n")
    prepared.launch()


def test_an_exception_in_the_call_names_the_users_line(tmp_path):
    with pytest.raises(UserCodeError) as info:
        _prepare(tmp_path, "def matmul(a, b, c, alpha=1.0, beta=0.0):\n    raise ValueError('bad tile')\n")
    assert str(info.value).startswith("matmul(): ") and "k.py:2 in matmul: ValueError: bad tile" in str(info.value)


def test_sys_exit_in_the_call_is_the_rows_error_not_the_workers_end(tmp_path):
    with pytest.raises(UserCodeError, match="SystemExit"):
        _prepare(tmp_path, "import sys\n\n\ndef matmul(a, b, c, alpha=1.0, beta=0.0):\n    sys.exit(1)\n")


# -- a write into the inputs during prepare (a Python row's first call) is still caught ----------------


def test_draw_intact_sees_writes_into_logical_operands_and_laid_out_copies():
    ops = _operands(4, 6, 8)
    draw = Draw("uniform", 0, ops, None, {"a": ops.a.clone(), "b": ops.b.clone()})
    col_b, _ = ops.stored("b", Order.COL)
    assert draw.intact()
    col_b[0, 0] += 1  # the laid-out copy only: the logical B is untouched
    assert not draw.intact()
    draw.restore()
    ops.stored("b", Order.COL)
    assert draw.intact()
    ops.a[1, 1] = float("nan")
    assert not draw.intact()


# -- Triton's interpreter (CPU): the library kernel and the worked example -----------------------------


INTERPRETED = """\
import importlib.util, sys, torch
from gemmcompare.implementations import triton_kernels as tk
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations.base import Operands
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import load_spec

torch.manual_seed(0)
worst = 0.0
# the library kernel: f16 in (the interpreter's dot mishandles bf16), f32 and f16 out, every A/B order, alpha/beta
for out in (torch.float32, torch.float16):
    for a_row in (True, False):
        for b_row in (True, False):
            for alpha, beta in ((1.0, 0.0), (2.0, 0.5)):
                m, n, k = 37, 29, 45
                a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
                A = a if a_row else a.t().contiguous().t()
                B = b if b_row else b.t().contiguous().t()
                c0 = torch.randn(m, n).to(out)
                c = c0.clone()
                tk.launch(A, B, c, alpha, beta, kernel=tk.matmul_kernel, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
                want = alpha * (a.double() @ b.double()) + beta * c0.double()
                tol = 1e-4 if out is torch.float32 else 0.05
                err = (c.double() - want).abs().max().item()
                assert err < tol, (out, a_row, b_row, alpha, beta, err)
print("library kernel ok")

# the worked example through the python family's prepare: correct everywhere; the wrong copy misses K's tail
exp = load_spec(sys.argv[1])
impls = {i.name: i for i in exp.implementations}
for (m, n, k) in ((16, 8, 16), (70, 65, 64), (37, 29, 45)):
    g = torch.Generator().manual_seed(m)
    ops = Operands(torch.randn(m, k, generator=g).half(), torch.randn(k, n, generator=g).half())
    want = ops.a.double() @ ops.b.double()
    errs = {}
    for name in ("python.my_triton_gemm", "python.wrong_k_tail"):
        prepared = impls[name].prepare(GemmProblem(m, n, k), BUILTIN_CONTRACTS["f16_f32acc_tn"], ops, None)
        prepared.poison()
        prepared.launch()
        errs[name] = (prepared.output().double() - want).abs().max().item()
    assert errs["python.my_triton_gemm"] < 1e-4, errs
    assert (errs["python.wrong_k_tail"] > 1.0) is (k % 32 != 0), (m, n, k, errs)
print("example ok")
"""


def test_triton_kernels_under_the_interpreter(tmp_path):
    pytest.importorskip("triton")
    script = tmp_path / "interp.py"
    script.write_text(INTERPRETED)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script), str(EXAMPLE / "python_kernels.yaml")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "library kernel ok" in out.stdout and "example ok" in out.stdout


# -- torch.compile of the contract's GEMM ----------------------------------------------------------------


def test_summarize_inductor_code_names_extern_and_template_kernels():
    code = textwrap.dedent("""\
        triton_tem_fused_mm_0 = async_compile.triton('triton_tem_fused_mm_0', '''
        @triton_heuristics.template(num_stages=3, num_warps=8, triton_meta={})
        def triton_tem_fused_mm_0(arg_A, arg_B, out_ptr0):
            BLOCK_M : tl.constexpr = 128
            BLOCK_N : tl.constexpr = 256
            BLOCK_K : tl.constexpr = 64
        ''', device_str='cuda')
        def call(args):
            triton_tem_fused_mm_0.run(arg0_1, arg1_1, buf0, stream=stream0)
            extern_kernels.mm_dtype(arg0_1, arg1_1, out=buf1)
        """)
    text = summarize_inductor_code([code])
    assert "extern_kernels.mm_dtype (ATen; cuBLAS on CUDA)" in text
    assert "triton_tem_fused_mm_0 (BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8)" in text
    assert summarize_inductor_code([]) == "no kernel identified in inductor's code"


def test_torch_compile_compiles_the_contracts_gemm_once_and_says_what_runs():
    # bf16 in, bf16 out: what torch.mm returns, compiled with max-autotune (on the CPU here)
    # (inductor's CPU GEMM templates are left out of its search here: they take half a minute to tune and
    # this test is about the plumbing around the compile, not inductor's choice)
    contract = BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"]
    impl = FIXED["library.torch_compile"]()
    p = GemmProblem(32, 24, 16)
    ops = _operands(32, 24, 16, dtype=torch.bfloat16)
    with torch._inductor.config.patch(max_autotune_gemm_backends="ATEN"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = impl.prepare(p, contract, ops, None)
    # the caches are off on purpose: dynamo's word that this turns its profile-guided cache off is not printed
    assert not [w for w in seen if "dynamo_pgo" in str(w.message)]
    first.launch()
    want = ops.a.double() @ ops.b.double()
    assert first.output().dtype is torch.bfloat16
    assert (first.output().double() - want).abs().max().item() < 0.1
    assert first.timing_fields["compiled"] == "torch.mm(a, b)" and first.build_seconds > 0
    assert first.timing_fields["inductor_kernels"] != "no kernel identified in inductor's code"
    assert "compiled torch.mm(a, b)" in first.notes and "compile " in first.notes and "caches off" in first.notes
    again = impl.prepare(p, contract, ops, None)  # the same problem: no second compile
    assert again.build_seconds == first.build_seconds and again.notes == first.notes
