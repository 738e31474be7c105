"""What the CUTLASS compile tests share (test_cutlass_compile.py, test_cutlass_grouped_compile.py): render catalog
configurations, compile every kernel and entry TU as the JIT build does, in parallel (one nvcc per core, the
heaviest first), and read one TU's result."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from gemmcompare.build import toolchain
from gemmcompare.cutlass import render
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.errors import ToolchainError


def compile_cases(cases: list[tuple[str, str]], out_dir) -> dict:
    """(catalog name, arch) cases -> {(name, TU filename): (compile result, seconds)}; a SKIP without nvcc or
    CUTLASS's headers."""
    try:
        toolchain.nvcc_path()
        toolchain.cutlass_include_dirs()
    except ToolchainError as exc:
        pytest.skip(str(exc))
    jobs = []
    for name, arch in cases:
        for source in render.render(lookup(name).config):
            path = out_dir / source.filename
            path.write_text(source.text)
            jobs.append((name, arch, path))

    def compile_one(job):
        name, arch, path = job
        start = time.monotonic()
        result = toolchain.compile_object(path, arch, path.with_suffix(".o"), uses_cutlass=True)
        return (name, path.name), (result, time.monotonic() - start)

    # Heaviest first (arch-specific kernels, then kernel TUs), so the longest TU does not start last.
    jobs.sort(key=lambda j: (not j[1].endswith("a"), not j[2].name.endswith("_kernel.cu")))
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        results = dict(pool.map(compile_one, jobs))
    print(f"\ncompiled {len(jobs)} TUs in {time.monotonic() - start:.0f} s wall:")
    for (_, filename), (_, seconds) in sorted(results.items(), key=lambda kv: -kv[1][1]):
        print(f"  {seconds:6.1f} s  {filename}")
    return results


def tu_output(results, name: str, kernel: bool) -> tuple[str, float]:
    """One configuration's kernel (or entry) TU: its compiler output and seconds, after asserting it compiled."""
    config = lookup(name).config
    filename = render.kernel_filename(config) if kernel else render.entry_filename(config)
    result, seconds = results[(name, filename)]
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{filename} failed to compile:\n{output[-6000:]}"
    return output, seconds
