"""Bring-your-own-kernel entries: validation, adapter generation, new-kernel, and a compile-only build."""

from pathlib import Path

import pytest

from gemmcompare.build import toolchain
from gemmcompare.cli import main
from gemmcompare.errors import SpecError
from gemmcompare.implementations.custom import check_flag, render_capstone_adapter
from gemmcompare.spec import load_spec, parse_spec

BYO = Path(__file__).resolve().parents[1] / "experiments" / "byo_kernel"

SPEC = """\
name: t
problems: [{m: 64, n: 64, k: 64}]
contracts: [f16_f32acc_tn]
implementations:
  - library.cublas
  - custom: {ENTRY}
"""


def spec_issues(entry: str, base_dir: Path = BYO):
    with pytest.raises(SpecError) as info:
        parse_spec(SPEC.replace("{ENTRY}", entry), "t.yaml", base_dir=base_dir)
    return "\n".join(str(p) for p in info.value.problems)


def test_example_spec_is_valid_and_names_its_implementations():
    exp = load_spec(BYO / "byo_kernel.yaml")
    names = [i.name for i in exp.implementations]
    assert "custom.my_gemm" in names and "custom.wrong_last_column" in names


def test_missing_source_file():
    msg = spec_issues("{name: x, sources: [nope.cu]}")
    assert "file not found: nope.cu" in msg and "t.yaml:6" in msg


def test_bad_abi_name_suggests():
    msg = spec_issues("{name: x, sources: [my_gemm.cu], abi: capston}")
    assert "abi must be one of" in msg and "capstone" in msg


@pytest.mark.parametrize("flag", ["-arch=sm_70", "-gencode=arch=compute_80,code=sm_80", "-o", "-I/usr/include",
                                  "--include-path=/x", "-DA=1 -DB=2", "notaflag"])
def test_bad_flags_rejected_with_reason(flag):
    assert check_flag(flag)
    msg = spec_issues(f"{{name: x, sources: [my_gemm.cu], flags: ['{flag}']}}")
    assert "flag" in msg


@pytest.mark.parametrize("flag", ["-DTILE=128", "-O3", "--use_fast_math", "-maxrregcount=128", "-Xptxas=-v"])
def test_good_flags_allowed(flag):
    assert check_flag(flag) is None


def test_missing_entry_point():
    msg = spec_issues("{name: x, sources: [my_gemm.cu], entry: my_solve}")
    assert "entry point 'my_solve' is not defined" in msg


def test_general_abi_needs_a_contract():
    msg = spec_issues("{name: x, sources: [my_gemm.cu], abi: general, entry: solve}")
    assert "contract" in msg


def test_capstone_adapter_calls_the_entry_through_the_abi():
    text = render_capstone_adapter("gc_custom_x", "solve")
    assert 'extern "C" int gc_custom_x(const gc_gemm_args* args' in text
    assert "void solve(const __half* a, const __half* b, float* c, size_t m, size_t n, size_t k, cudaStream_t stream);" in text
    assert "torch" not in text


@pytest.mark.parametrize("abi", ["capstone", "general"])
def test_new_kernel_writes_a_valid_spec(tmp_path, abi):
    assert main(["new-kernel", "my_k", "--abi", abi, "--dir", str(tmp_path)]) == 0
    exp = load_spec(tmp_path / "my_k.yaml")
    assert [i.name for i in exp.implementations] == ["library.cublas", "custom.my_k"]
    assert main(["new-kernel", "my_k", "--dir", str(tmp_path)]) == 1  # no silent overwrite


@pytest.mark.compile
def test_example_kernel_and_adapter_compile(tmp_path):
    if not toolchain.nvcc_path().exists():
        pytest.skip("nvcc not found")
    adapter = tmp_path / "adapter.cu"
    adapter.write_text(render_capstone_adapter("gc_custom_my_gemm", "solve"))
    for src in (BYO / "my_gemm.cu", adapter):
        res = toolchain.compile_object(src, "sm_80", tmp_path / (src.stem + ".o"))
        assert res.returncode == 0, res.stderr + res.stdout


@pytest.mark.compile
@pytest.mark.torch_build
def test_example_builds_through_the_builder(tmp_path):
    """The whole extension (user file + adapter + generated torch binding) builds and imports."""
    from gemmcompare.build.extension import BuildFailure, build_extensions, plan_extensions

    exp = load_spec(BYO / "byo_kernel.yaml")
    impl = next(i for i in exp.implementations if i.name == "custom.my_gemm")
    built = build_extensions(plan_extensions([impl.build_request("sm_80")]), cache_dir=tmp_path, progress=False)
    (result,) = built.values()
    assert not isinstance(result, BuildFailure), result.message
    assert list(result.module.entries()) == ["gc_custom_my_gemm"]
    assert result.module.abi_version == 4  # the generic binding: batched dims (3), the grouped form (4)
    assert result.resources_for("")["spill_stores"] == 0
