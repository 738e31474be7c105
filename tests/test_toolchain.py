"""Finding the CUDA toolkit (build/toolchain.py cuda_home): a wrapper script named nvcc on PATH is followed to
the toolkit it execs; a real nvcc binary is not read past its head (reading the whole binary cost a cached
build 0.45 s on the H200)."""

import os

from gemmcompare.build import toolchain


def _toolkit(root):
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (root / "include" / "cuda_runtime.h").write_text("")
    return root


def _find(monkeypatch, nvcc_on_path):
    toolchain.cuda_home.cache_clear()
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: str(nvcc_on_path))
    real_glob = toolchain.Path.glob
    monkeypatch.setattr(toolchain.Path, "glob",
                        lambda self, pattern: iter(()) if str(self) == "/usr/local" else real_glob(self, pattern))
    real_has = toolchain._has_toolkit
    monkeypatch.setattr(toolchain, "_has_toolkit",
                        lambda root: not str(root).startswith("/usr/local/cuda") and real_has(root))
    try:
        return toolchain.cuda_home()
    except toolchain.ToolchainError:
        return None
    finally:
        toolchain.cuda_home.cache_clear()


def test_a_wrapper_script_on_path_leads_to_the_toolkit_it_execs(monkeypatch, tmp_path):
    kit = _toolkit(tmp_path / "cuda-13.0")
    wrapper = tmp_path / "wrap" / "bin" / "nvcc"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\nexec {kit}/bin/nvcc "$@"\n')
    os.chmod(wrapper, 0o755)
    assert _find(monkeypatch, wrapper) == kit


def test_a_binary_nvcc_is_not_read_as_a_script(monkeypatch, tmp_path):
    kit = _toolkit(tmp_path / "elsewhere")
    binary = tmp_path / "bin" / "nvcc"  # its toolkit is tmp_path (no headers there): not a toolkit
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF" + b"\0" * 64 + f" {kit}/bin/nvcc ".encode() + b"\0" * 64)
    assert _find(monkeypatch, binary) is None  # the path inside a binary is not followed
