"""library.cublas_grouped on the CPU (extensions/library/cublas_grouped*): the plan that turns experts into
cuBLAS groups (compiled into a host program and run), what the row admits, a syntax-only compile of its entry
against torch's and cuBLAS's headers (the real cublasGemmGroupedBatchedEx branch: the installed cuBLAS is 12.5+),
and an nvcc compile of its pointer-table kernel. The GPU test is tests/test_gpu_grouped.py."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.grouped import GroupedProblem
from gemmcompare.implementations import FIXED
from gemmcompare.paths import ABI_INCLUDE_DIR, EXTENSIONS_DIR

PLAN_MAIN = r"""
#include <cstdio>
#include "library/cublas_grouped_plan.h"

static void show(const char* name, std::vector<int64_t> ms) {
  gc_cublas_grouped::Plan plan;
  bool ok = gc_cublas_grouped::make_plan(ms.data(), static_cast<int64_t>(ms.size()), &plan);
  std::printf("%s %d |", name, ok ? 1 : 0);
  for (int e : plan.expert) std::printf(" %d", e);
  std::printf(" |");
  for (size_t i = 0; i < plan.m.size(); ++i) std::printf(" %dx%d", plan.m[i], plan.group_size[i]);
  std::printf("\n");
}

int main() {
  show("mixed", {3, 0, 5, 5, 0, 3, 1});
  show("empty", {0, 0, 0});
  show("one", {7});
  show("negative", {4, -1});
  show("huge", {4, 3000000000LL});
  return 0;
}
"""


def _cxx() -> str:
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    return cxx


def test_equal_ms_share_a_cublas_group_and_empty_experts_are_left_out(tmp_path):
    (tmp_path / "plan.cpp").write_text(PLAN_MAIN)
    done = subprocess.run([_cxx(), "-std=c++17", f"-I{EXTENSIONS_DIR}", "plan.cpp", "-o", "plan"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = dict(line.split(" ", 1) for line in subprocess.run([str(tmp_path / "plan")], capture_output=True,
                                                             text=True).stdout.splitlines())
    assert out["mixed"] == "1 | 6 0 5 2 3 | 1x1 3x2 5x2"  # by M, then by expert; the empty ones gone
    assert out["empty"] == "1 | |"  # nothing to call
    assert out["one"] == "1 | 0 | 7x1"
    assert out["negative"].startswith("0") and out["huge"].startswith("0")


P = GroupedProblem(256, 512, (3, 0, 5))


@pytest.mark.parametrize("contract, words", [
    ("bf16_bf16out_f32acc_tn", None),
    ("f32_tf32_tn", None),
    ("bf16_f32acc_tn", "writes its input type (bf16 in, bf16 out), not f32"),
    ("e4m3_bf16out_f32acc_tn_tensor", "has no FP8 path"),
    ("bf16_f32acc_tt", "grouped problems run under TN contracts"),
])
def test_what_the_cublas_grouped_row_admits(contract, words):
    s = FIXED["library.cublas_grouped"]().admits(P, BUILTIN_CONTRACTS[contract])
    assert (words is None and s) or (words is not None and not s and words in s.reason), s


def test_the_cublas_grouped_row_takes_neither_dense_nor_masked_problems():
    impl, bf16 = FIXED["library.cublas_grouped"](), BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"]
    from gemmcompare.problems import GemmProblem

    assert impl.admits(GemmProblem(64, 64, 64), bf16).reason.startswith("it runs grouped problems only")
    assert "contiguous layout" in impl.admits(GroupedProblem(256, 512, (3, 0, 5), "masked", 128), bf16).reason


def test_an_old_cublas_is_a_skip_saying_which(monkeypatch):
    from gemmcompare.implementations import library_grouped

    monkeypatch.setattr(library_grouped, "cublas_version", lambda: (12, 4))
    s = FIXED["library.cublas_grouped"]().admits(P, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"])
    assert not s and "came in cuBLAS 12.5; this one is 12.4" in s.reason


def test_the_entry_compiles_against_torchs_and_cublass_headers(tmp_path):
    """A syntax-only pass, as the JIT build compiles it (C++20: what the newest torch's cpp_extension passes),
    after checking that these cuBLAS headers have the grouped call (else the entry's fallback branch is all that
    would be checked)."""
    from torch.utils.cpp_extension import include_paths

    from gemmcompare.build import toolchain

    cxx = _cxx()
    dirs = [str(ABI_INCLUDE_DIR), str(EXTENSIONS_DIR), *include_paths(), str(toolchain.cuda_home() / "include"),
            *toolchain.library_include_dirs()]
    flags = ["-std=c++20", "-fsyntax-only", *[f"-I{d}" for d in dirs]]
    probe = tmp_path / "version.cpp"
    probe.write_text("#include <cublas_v2.h>\nstatic_assert(CUBLAS_VERSION >= 120500, \"cuBLAS before 12.5\");\n")
    done = subprocess.run([cxx, *flags, str(probe)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for source in FIXED["library.cublas_grouped"]().sources():
        if source.filename.endswith(".cpp"):
            done = subprocess.run([cxx, *flags, str(source.path)], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.compile
def test_the_pointer_table_kernel_compiles(tmp_path):
    from gemmcompare.build import toolchain

    nvcc = toolchain.cuda_home() / "bin" / "nvcc"
    if not nvcc.exists():
        pytest.skip("no nvcc")
    source = EXTENSIONS_DIR / "library" / "cublas_grouped_table.cu"
    done = subprocess.run([str(nvcc), "-std=c++17", "-arch=sm_90", f"-I{EXTENSIONS_DIR}", "-c", str(source), "-o",
                           str(tmp_path / "table.o")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
