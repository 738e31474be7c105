"""A first answer comes fast (issue 27): a build on a warm cache imports neither torch nor pandas and
still misses on every change that changes the binary; a run records each phase's wall seconds in its
receipt and prints them in one line; its measuring worker is started before the builds are looked up.
CPU only: the run tests use the fake GPU (fake_device.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gemmcompare.build import extension, toolchain
from gemmcompare.build.binding import EntryPoint
from gemmcompare.build.request import KernelSource

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra):
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


# -- the build cache --------------------------------------------------------------------------------------

def test_torchs_versions_are_read_without_importing_it_and_are_torchs_own():
    code = ("import sys; from gemmcompare.build import toolchain; v = toolchain.torch_versions();"
            "before = 'torch' in sys.modules; import torch;"
            "print(before, v['torch'] == str(torch.__version__), v['cuda'] == torch.version.cuda)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]


def _plan(tmp_path: Path, source: str = "#include \"mine.cuh\"\n// kernel\n", header: str = "// v1\n",
          arch: str = "sm_80", flags: tuple[str, ...] = (), cutlass: bool = False) -> extension.ExtensionPlan:
    kernel = tmp_path / "k.cu"
    kernel.write_text(source)
    (tmp_path / "mine.cuh").write_text(header)
    return extension.ExtensionPlan("t", arch, [KernelSource("k.cu", path=kernel)], [EntryPoint("f", False)],
                                   flags, (), cutlass)


def test_the_cache_key_misses_on_every_change_that_changes_the_binary(tmp_path, monkeypatch):
    versions = {"nvcc": "13.0", "torch": "2.11.0+cu130", "cutlass": "4.2.0.0"}
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: versions["nvcc"])
    monkeypatch.setattr(toolchain, "torch_version", lambda: versions["torch"])
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: versions["cutlass"])
    base = _plan(tmp_path, cutlass=True).cache_key()
    assert _plan(tmp_path, cutlass=True).cache_key() == base  # the same inputs hit
    changed = {
        "source": _plan(tmp_path, source="#include \"mine.cuh\"\n// kernel 2\n", cutlass=True).cache_key(),
        "included header": _plan(tmp_path, header="// v2\n", cutlass=True).cache_key(),
        "arch": _plan(tmp_path, arch="sm_90", cutlass=True).cache_key(),
        "flags": _plan(tmp_path, flags=("-DX=1",), cutlass=True).cache_key(),
    }
    for what, value in (("nvcc", "13.1"), ("torch", "2.12.0+cu130"), ("cutlass", "4.3.0.0")):
        old, versions[what] = versions[what], value
        changed[f"{what} version"] = _plan(tmp_path, cutlass=True).cache_key()
        versions[what] = old
    for what, key in changed.items():
        assert key != base, f"a change of the {what} still hits the cache"
    assert len(set(changed.values())) == len(changed)


SPEC = """\
name: cached
problems: [{m: 256, n: 256, k: 256}]
contracts: [f32_strict_tt]
implementations: [lab.scalar_coalesced, lab.shared_16x16]
"""


def test_a_build_on_a_warm_cache_imports_neither_torch_nor_pandas(tmp_path, nvcc):
    """The cache is filled with sealed entries under the names the plans hash to (no compiler runs); `build`
    then finds every one of them, says so, and has loaded no heavy library."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import sys
        from gemmcompare.build.cache_entry import entry_files, seal
        from gemmcompare.build import extension
        from gemmcompare.spec import load_spec
        from gemmcompare.cli import main

        exp = load_spec({str(spec)!r})
        planned = extension.plan_extensions([i.build_request(i.target_arch(80)) for i in exp.implementations])
        for plan in planned:  # what a finished build leaves in the cache
            entry = {str(cache)!r} + "/" + plan.module_name
            import os; os.makedirs(entry)
            open(entry + "/" + plan.module_name + ".so", "wb").write(b"not loaded by build")
            open(entry + "/resources.json", "w").write("[]")
            open(entry + "/build_seconds", "w").write("12.5")
            seal(__import__("pathlib").Path(entry), entry_files(plan.module_name))
            open(entry + "/complete", "w").write("")
        code = main(["build", {str(spec)!r}, "--arch", "sm_80", "--cache-dir", {str(cache)!r}, "--no-progress"])
        print("EXIT", code, "PLANS", len(planned), "LOADED", [m for m in ("torch", "pandas", "matplotlib")
                                                             if m in sys.modules])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("cached]") == 2, out
    assert out.strip().splitlines()[-1] == "EXIT 0 PLANS 1 LOADED []", out


def test_a_cached_extension_is_imported_where_it_is_launched(tmp_path, monkeypatch):
    loaded = []
    monkeypatch.setattr(extension, "_load_module", lambda name, so: loaded.append(so) or f"module {name}")
    folder = tmp_path / "gc_t"
    folder.mkdir()
    (folder / "build_seconds").write_text("3.5")
    plan = type("P", (), {"module_name": "gc_t_not_imported"})()
    ext = extension.load_extension(plan, folder, cached=True, import_now=False)
    assert loaded == [] and ext.build_seconds == 3.5
    assert ext.module == "module gc_t_not_imported" and loaded == [folder / "gc_t_not_imported.so"]
    ext.module  # noqa: B018 - once imported, kept
    assert len(loaded) == 1
    extension.load_extension(plan, folder, cached=False)  # a fresh build is imported at once
    assert len(loaded) == 2
