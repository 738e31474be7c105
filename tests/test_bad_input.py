"""Bad input gets a clear error that names what is wrong and where (see docs/bad_input.md)."""

import builtins
from pathlib import Path

import pytest

from gemmcompare.build import toolchain
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.errors import ToolchainError
from gemmcompare.runner.executor import estimate_bytes
from gemmcompare.implementations import FIXED
from gemmcompare.implementations.base import Constraints, Skip
from gemmcompare.problems import GemmProblem


def test_contract_mismatch_is_a_skip_with_the_reason():
    s = FIXED["library.torch_matmul"]().supports(GemmProblem(64, 64, 64), BUILTIN_CONTRACTS["f16_f16acc_tn"])
    assert isinstance(s, Skip) and "accumulates in f32" in s.reason
    s = FIXED["library.cublas"]().supports(GemmProblem(64, 64, 64), BUILTIN_CONTRACTS["f16_f32acc_bias_relu_tn"])
    assert isinstance(s, Skip) and "epilogue" in s.reason


def test_index_overflow_is_a_skip_with_the_reason():
    s = Constraints(index_bits=32).check(GemmProblem(70000, 70000, 64))
    assert isinstance(s, Skip) and "overflow the kernel's 32-bit index type" in s.reason


def test_memory_estimate_for_a_huge_shape():
    need = estimate_bytes(GemmProblem(100_000, 100_000, 100_000), BUILTIN_CONTRACTS["f16_f32acc_tn"], 3)
    assert need > 200 * 2**30  # FP64 references alone are 3 x 80 GB: the runner SKIPs it, saying so


def test_missing_nvcc_names_what_was_searched(monkeypatch, tmp_path):
    toolchain.cuda_home.cache_clear()
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    monkeypatch.setattr(toolchain, "_has_toolkit", lambda root: False)
    try:
        with pytest.raises(ToolchainError, match="no CUDA toolkit found"):
            toolchain.cuda_home()
    finally:
        toolchain.cuda_home.cache_clear()


def test_missing_cutlass_package_is_named(monkeypatch):
    toolchain.cutlass_root.cache_clear()
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "cutlass_library":
            raise ImportError("no module")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    try:
        with pytest.raises(ToolchainError, match="nvidia-cutlass"):
            toolchain.cutlass_root()
    finally:
        toolchain.cutlass_root.cache_clear()


@pytest.mark.compile
@pytest.mark.torch_build
def test_compile_error_is_a_build_error_naming_the_users_file_and_line(tmp_path):
    from gemmcompare.build.extension import BuildFailure, build_extensions, plan_extensions
    from gemmcompare.spec import parse_spec

    bad = tmp_path / "broken.cu"
    bad.write_text("#include <cuda_fp16.h>\n#include <cuda_runtime.h>\nvoid solve(const __half* a, const __half* b, "
                   "float* c, size_t m, size_t n, size_t k, cudaStream_t s) {\n  this is not C++;\n}\n")
    exp = parse_spec("name: t\nproblems: [{m: 8, n: 8, k: 8}]\ncontracts: [f16_f32acc_tn]\n"
                     "implementations: [{custom: {name: broken, sources: [broken.cu]}}]\n", "t.yaml", base_dir=tmp_path)
    built = build_extensions(plan_extensions([exp.implementations[0].build_request("sm_80")]),
                             cache_dir=tmp_path / "cache", progress=False)
    (result,) = built.values()
    assert isinstance(result, BuildFailure)
    assert f"{bad}(4)" in result.message and "error" in result.message


def test_output_piped_into_a_closed_reader_ends_quietly():
    """`gemmcompare cutlass list | head -1` when the reader has already left: no traceback, exit 141
    (SIGPIPE's). The read end is closed before the command starts, so its first write fails."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "gemmcompare", "cutlass", "list"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write_end)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert proc.returncode == 141
