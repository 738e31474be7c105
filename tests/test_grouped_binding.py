"""The binding of the C ABI's grouped form (gemm_abi.h, ABI 4) on the CPU: what AbiKernel hands a fake extension
for a grouped problem with empty groups (11 dims with stride_b and m = sum M, the device offsets and the host Ms as
int64 tensors made once outside the launch), that dense and batched calls are handed what they were before, the
custom entry's `grouped:` declaration (a SKIP that says to declare it; the capstone ABI refuses it with the spec's
line) and its constraints per group, the generated binding's text (and a syntax-only compile against torch's
headers), and `new-kernel --abi general --grouped` (its spec, and an nvcc compile of its C starter)."""

from pathlib import Path

import pytest
import torch

from gemmcompare.build.binding import EntryPoint, render_binding
from gemmcompare.cli import main
from gemmcompare.contracts import correctness as corr
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.grouped import GroupedProblem
from gemmcompare.plan import make_plan
from gemmcompare.problems import GemmProblem
from gemmcompare.runner.inputs import make_draw
from gemmcompare.spec import load_spec

from fake_abi import FakeExtension

BF16 = BUILTIN_CONTRACTS["bf16_f32acc_tn"]
P = GroupedProblem(16, 24, (0, 5, 0, 0, 3, 0))  # empty groups first, between, and last
MASKED = GroupedProblem(16, 24, (0, 5, 3), layout="masked", capacity=128)

KERNEL = 'extern "C" int my_entry(const gc_gemm_args* args, char* err, size_t err_len) { return 0; }\n'
SPEC = """\
name: t
problems:
  - {grouped: {n: 16, k: 24, m: [0, 5, 0, 0, 3, 0]}}
  - {m: 9, n: 16, k: 24}
  - {m: 9, n: 16, k: 24, batch: 3}
contracts: [bf16_f32acc_tn]
implementations:
  - custom: {name: mine, sources: [k.cu], entry: my_entry, abi: ABI, contract: bf16_f32acc_tn EXTRA}
"""


def _spec(tmp_path, abi="general", extra=""):
    (tmp_path / "k.cu").write_text(KERNEL)
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC.replace("ABI", abi).replace("EXTRA", extra))
    return spec


def test_the_grouped_form_handed_over(tmp_path):
    impl = load_spec(_spec(tmp_path, extra=", grouped: true")).implementations[0]
    assert impl.check(P, BF16, None)
    draw, ext = make_draw("uniform", P, BF16, 11, "cpu"), FakeExtension()
    prepared = impl.prepare(P, BF16, draw.operands, ext)
    assert ext.log == []  # no workspace query (a custom entry has none), nothing launched at prepare
    prepared.poison()
    prepared.launch()
    prepared.launch()  # the same tensors every launch: made once at prepare
    dims = [8, 16, 24, 24, 24, 16, 1, 0, 16 * 24, 0, 6]  # m = sum M; lda = ldb = k; ldc = n; stride_b = n * k
    handed = (dims, [(torch.int64, "cpu", [0, 0, 5, 5, 5, 8, 8]), (torch.int64, "cpu", [0, 5, 0, 0, 3, 0])])
    assert ext.log == [handed, handed]
    assert prepared.group_offsets.tolist() == list(P.offsets) and prepared.group_m_host.device.type == "cpu"
    assert prepared.storage_info["copies_in_timing"] == [] and prepared.storage_info["stride_b"] == 384
    check = corr.check_output(prepared.output(), draw.refs, BF16, corr.CorrectnessSettings(), P.k, "uniform", 11)
    assert check.passed, check.message


def test_hopper_grouped_is_handed_the_same_grouped_form():
    """hopper.grouped (a built-in family, extensions/hopper/grouped.cuh) goes through the same AbiGroupedPrepared:
    11 dims, the device offsets and the host Ms; its entry symbol is its configuration's."""
    from gemmcompare.implementations import PARAMETRIZED, instantiate

    impl = instantiate(PARAMETRIZED["hopper.grouped"], {})
    assert impl.check(P, BF16, None) and impl.entry_symbol == "gc_hopper_grouped_128x256x64_s4_c2_cm1_g8"
    draw, ext = make_draw("uniform", P, BF16, 11, "cpu"), FakeExtension()
    prepared = impl.prepare(P, BF16, draw.operands, ext)
    prepared.poison()
    prepared.launch()
    dims = [8, 16, 24, 24, 24, 16, 1, 0, 16 * 24, 0, 6]
    assert ext.log == [(dims, [(torch.int64, "cpu", [0, 0, 5, 5, 5, 8, 8]), (torch.int64, "cpu", [0, 5, 0, 0, 3, 0])])]
    check = corr.check_output(prepared.output(), draw.refs, BF16, corr.CorrectnessSettings(), P.k, "uniform", 11)
    assert check.passed, check.message


def test_dense_and_batched_calls_are_handed_what_they_were(tmp_path):
    impl = load_spec(_spec(tmp_path, extra=", grouped: true, batched: true")).implementations[0]
    ext = FakeExtension()
    for p in (GemmProblem(9, 16, 24), GemmProblem(9, 16, 24, 3)):
        impl.prepare(p, BF16, make_draw("uniform", p, BF16, 3, "cpu").operands, ext).launch()
    assert ext.log == [([9, 16, 24, 24, 24, 16], []), ([9, 16, 24, 24, 24, 16, 3, 9 * 24, 16 * 24, 9 * 16], [])]


def test_an_undeclared_custom_kernel_skips_a_grouped_problem_saying_what_to_declare(tmp_path):
    impl = load_spec(_spec(tmp_path)).implementations[0]
    skip = impl.admits(P, BF16)
    assert not skip and "declare `grouped: true`" in skip.reason and "gemm_abi.h, ABI 4" in skip.reason
    assert impl.admits(GemmProblem(9, 16, 24), BF16)


def test_a_declared_custom_kernel_skips_the_masked_layout(tmp_path):
    impl = load_spec(_spec(tmp_path, extra=", grouped: true")).implementations[0]
    skip = impl.admits(MASKED, BF16)
    assert not skip and "contiguous layout" in skip.reason


def test_capstone_cannot_declare_grouped(tmp_path, capsys):
    spec = _spec(tmp_path, abi="capstone", extra=", grouped: true")
    spec.write_text(spec.read_text().replace(", contract: bf16_f32acc_tn", ""))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:8" in err and "capstone ABI's solve() takes one GEMM" in err, err


def test_grouped_must_be_a_boolean(tmp_path, capsys):
    assert main(["validate", str(_spec(tmp_path, extra=", grouped: maybe"))]) == 2
    assert "grouped" in capsys.readouterr().err


def test_the_binding_fills_the_grouped_fields_from_11_dims_and_two_optional_tensors():
    text = render_binding([EntryPoint("x", True)])
    for line in ("args.groups = groups;", "args.group_offsets = static_cast<const int64_t*>(off.data_ptr());",
                 "args.group_m_host = static_cast<const int64_t*>(mh.data_ptr());",
                 "args.group_layout = GC_GROUPS_CONTIGUOUS;", 'py::arg("group_offsets") = py::none()',
                 "dims.size() == 11"):
        assert line in text, line
    # a dense or batched call's fields are filled as before: batch 1 and strides 0 unless 10 (or 11) dims say
    assert "args.batch = dims.size() == 10 ? dims[6] : 1;" not in text
    assert "args.batch = dims.size() >= 10 ? dims[6] : 1;" in text


def test_new_kernel_writes_a_grouped_general_starter_and_a_spec_that_plans_it(tmp_path):
    assert main(["new-kernel", "my_gg", "--abi", "general", "--grouped", "--dir", str(tmp_path)]) == 0
    exp = load_spec(tmp_path / "my_gg.yaml")
    assert [i.name for i in exp.implementations] == ["library.torch_grouped_mm", "library.cublas_loop", "custom.my_gg"]
    mine = exp.implementations[2]
    assert mine.takes_grouped and "my_gg_kernel" in (tmp_path / "my_gg.cu").read_text()
    for entry in exp.problems:
        s = mine.admits(entry.problem, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"])
        assert bool(s) == (entry.problem.layout == "contiguous"), (entry.problem.label, s)
    assert make_plan(exp)
    # grouped FP8 is a C starter only (a Python grouped callable is handed the scales as it is)
    assert main(["new-kernel", "my_gx", "--abi", "python", "--grouped", "--fp8", "--dir", str(tmp_path)]) == 2


def test_new_kernel_writes_a_grouped_fp8_general_starter_with_block_scales(tmp_path):
    assert main(["new-kernel", "my_gf", "--abi", "general", "--grouped", "--fp8", "--dir", str(tmp_path)]) == 0
    exp = load_spec(tmp_path / "my_gf.yaml")
    names = [i.name for i in exp.implementations]
    assert names[0] == "library.cublaslt_fp8_loop" and names[1].startswith("hopper.grouped_fp8") and names[2] == "custom.my_gf"
    mine = exp.implementations[2]
    assert mine.takes_grouped and mine.grouped_fp8
    (contract,) = exp.contracts
    assert contract.name == "e4m3_bf16out_f32acc_tn_block"
    for entry in exp.problems:
        assert mine.admits(entry.problem, contract), entry.problem.label
    text = (tmp_path / "my_gf.cu").read_text()
    # the grouped block scales as gemm_abi.h lays them out: scale_a with A's stacked rows, scale_b per group
    assert "args.scale_a[row * kblocks + kb]" in text and "lo * kblocks * nblocks" in text
    assert make_plan(exp)


@pytest.mark.compile
def test_the_grouped_fp8_general_starter_compiles(tmp_path):
    from gemmcompare.build import toolchain

    if not toolchain.nvcc_path().exists():
        pytest.skip("nvcc not found")
    assert main(["new-kernel", "my_gf", "--abi", "general", "--grouped", "--fp8", "--dir", str(tmp_path)]) == 0
    impl = load_spec(tmp_path / "my_gf.yaml").implementations[2]
    req = impl.build_request("sm_89")
    (src,) = req.sources
    res = toolchain.compile_object(Path(src.path), req.arch, tmp_path / "my_gf.o", extra_flags=req.cuda_flags,
                                   include_dirs=req.include_dirs)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


@pytest.mark.compile
def test_the_grouped_general_starter_compiles(tmp_path):
    from gemmcompare.build import toolchain

    if not toolchain.nvcc_path().exists():
        pytest.skip("nvcc not found")
    assert main(["new-kernel", "my_gg", "--abi", "general", "--grouped", "--dir", str(tmp_path)]) == 0
    impl = load_spec(tmp_path / "my_gg.yaml").implementations[2]
    req = impl.build_request("sm_80")
    (src,) = req.sources
    res = toolchain.compile_object(Path(src.path), req.arch, tmp_path / "my_gg.o", extra_flags=req.cuda_flags,
                                   include_dirs=req.include_dirs)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


@pytest.mark.compile
@pytest.mark.torch_build
def test_the_generated_binding_compiles_against_torchs_headers(tmp_path):
    """A syntax-only pass of the binding (the optional grouped tensors, py::none() defaults) with the installed
    torch's headers, as the JIT build compiles it."""
    import shutil
    import subprocess
    import sysconfig

    from torch.utils.cpp_extension import include_paths

    from gemmcompare.build import toolchain
    from gemmcompare.paths import ABI_INCLUDE_DIR

    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    source = tmp_path / "binding.cpp"
    source.write_text(render_binding([EntryPoint("x", True), EntryPoint("y")]))
    dirs = [str(ABI_INCLUDE_DIR), *include_paths(), str(toolchain.cuda_home() / "include"),
            *toolchain.library_include_dirs(), sysconfig.get_paths()["include"]]
    done = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=gc_binding_check",
                           *[f"-I{d}" for d in dirs], str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("constraints, words", [
    ("{m_multiple_of: 4}", "a group's M=5 is not a multiple of 4"),
    ("{n_multiple_of: 32}", "n=16 is not a multiple of 32 (grouped problems are not padded)"),
    ("{k_multiple_of: 16}", "k=24 is not a multiple of 16"),
])
def test_a_custom_entrys_constraints_hold_for_each_group(tmp_path, constraints, words):
    impl = load_spec(_spec(tmp_path, extra=f", grouped: true, constraints: {constraints}")).implementations[0]
    skip = impl.admits(P, BF16)
    assert not skip and words in skip.reason, skip
    fits = GroupedProblem(32, 32, (0, 8, 0, 4))  # empty groups are legal whatever M's multiple
    assert impl.admits(fits, BF16)


def test_every_group_empty_is_not_a_skip(tmp_path):
    impl = load_spec(_spec(tmp_path, extra=", grouped: true")).implementations[0]
    empty = GroupedProblem(16, 24, (0, 0, 0))
    assert impl.admits(empty, BF16)
    draw, ext = make_draw("uniform", empty, BF16, 2, "cpu"), FakeExtension()
    impl.prepare(empty, BF16, draw.operands, ext).launch()
    assert ext.log == [([0, 16, 24, 24, 24, 16, 1, 0, 384, 0, 3],
                        [(torch.int64, "cpu", [0, 0, 0, 0]), (torch.int64, "cpu", [0, 0, 0])])]


FP8_SPEC = """\
name: t
problems:
  - {grouped: {n: 256, k: 256, m: [0, 5, 0, 3]}}
contracts: [CONTRACTS]
implementations:
  - custom: {name: mine, sources: [k.cu], entry: my_entry, abi: general, contract: e4m3_bf16out_f32acc_tn_block,
             grouped: true, scalings: [SCALINGS]}
"""


def test_a_custom_grouped_entry_runs_fp8_grouped_problems_when_it_declares_block_scales(tmp_path, capsys):
    """gemm_abi.h defines block scales for grouped problems (scale_a with A's stacked rows, scale_b per group): an
    own grouped kernel that declares them runs grouped problems under block contracts; other scalings of a grouped
    problem are SKIPs saying so; an entry whose declaration has no block scales under a grouped FP8 spec is exit 2
    at its entry."""
    (tmp_path / "k.cu").write_text(KERNEL)
    spec = tmp_path / "t.yaml"
    spec.write_text(FP8_SPEC.replace("CONTRACTS", "e4m3_bf16out_f32acc_tn_block, e4m3_bf16out_f32acc_tn_tensor")
                    .replace("SCALINGS", "block, tensor"))
    (mine,) = load_spec(spec).implementations
    p, c = GroupedProblem(256, 256, (0, 5, 0, 3)), BUILTIN_CONTRACTS
    assert mine.grouped_fp8 and mine.check(p, c["e4m3_bf16out_f32acc_tn_block"], None)
    tensor = mine.check(p, c["e4m3_bf16out_f32acc_tn_tensor"], None)
    assert not tensor and "block scales only through the C ABI" in tensor.reason
    assert mine.check(GemmProblem(64, 256, 256), c["e4m3_bf16out_f32acc_tn_tensor"], None)  # dense: as declared
    spec.write_text(FP8_SPEC.replace("CONTRACTS", "e4m3_bf16out_f32acc_tn_tensor").replace("SCALINGS", "tensor"))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:6:" in err and "declares no grouped FP8 path" in err and "`scalings: [block]`" in err, err
