import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "compile: compiles kernels with nvcc (no GPU needed)")
    # A compile test that also builds a torch binding: what it compiles depends on the installed torch's headers,
    # so CI's floor environment runs it too (.ci/run); the other compile tests depend only on nvcc and
    # nvidia-cutlass's headers.
    config.addinivalue_line("markers", "torch_build: a compile test that builds a torch binding")
    # What CI's floor suite leaves out (.ci/run): its question is whether the oldest releases setup.py allows run
    # the code, and these ask something the releases do not change: whether every committed receipt still
    # reads (the data; the floor reads one in test_report's and test_cli's own tests), and how a page lays out in
    # Chromium (the same browser for both suites). They take about 3 CPU-minutes of CI's two cores.
    config.addinivalue_line("markers", "newest_only: run by the newest-releases suite, left out of CI's floor suite")


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="no CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def nvcc():
    """The CUDA toolkit's nvcc, or a skip that says why kernels cannot be compiled here (compile tests)."""
    import subprocess

    from gemmcompare.build import toolchain
    from gemmcompare.errors import ToolchainError

    try:
        toolchain.nvcc_version()
        return toolchain.nvcc_path()
    except (ToolchainError, OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"nvcc is not available, so kernels cannot be compiled here: {exc}")

