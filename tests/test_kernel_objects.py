"""The object cache of kernel TUs (build/kernel_objects.py) and the JIT build's use of it (build/extension.py):
keys that name no machine, so that objects compiled here can be carried to a GPU machine; a build that links
them only when every kernel TU has one; the same SASS either way; and a build that compiles everything itself
when a carried object does not link."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gemmcompare.build import kernel_objects
from gemmcompare.build.cache_entry import seal
from gemmcompare.build.extension import build_extensions, plan_extensions, prebuilt_objects
from gemmcompare.build.request import BuildRequest, KernelSource

KERNEL = '#include "mine/tile.cuh"\n__global__ void k(float* x) { x[threadIdx.x] = TILE; }\n'


def _checkout(root: Path, tile: int = 4) -> Path:
    """A kernel source tree as a checkout or an install holds it: extensions/mine/{k.cu,tile.cuh}."""
    ext = root / "extensions"
    (ext / "mine").mkdir(parents=True)
    (ext / "mine" / "tile.cuh").write_text(f"#define TILE {tile}\n")
    (ext / "mine" / "k.cu").write_text(KERNEL)
    return ext


def _key(monkeypatch, ext: Path, arch="sm_90a", flags=()) -> str:
    monkeypatch.setattr(kernel_objects, "EXTENSIONS_DIR", ext)
    src = KernelSource("mine_k.cu", path=ext / "mine" / "k.cu")
    return kernel_objects.tu_key(src, BuildRequest("mine", (src,), "gc_mine", arch, cuda_flags=tuple(flags),
                                                   include_dirs=(str(ext),)))


def test_a_tus_key_is_the_same_in_every_checkout_and_changes_with_what_changes_its_object(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_objects.toolchain, "nvcc_build", lambda: "V13.0.88 cuda_13.0.r13.0/compiler.36424714_0")
    here = _key(monkeypatch, _checkout(tmp_path / "laptop"))
    assert _key(monkeypatch, _checkout(tmp_path / "gpu-machine" / "repo")) == here  # another path, same key
    assert _key(monkeypatch, _checkout(tmp_path / "edited", tile=8)) != here  # a header's text
    assert _key(monkeypatch, _checkout(tmp_path / "a"), arch="sm_80") != here
    assert _key(monkeypatch, _checkout(tmp_path / "b"), flags=("-DMINE=1",)) != here
    monkeypatch.setattr(kernel_objects.toolchain, "nvcc_build", lambda: "V13.0.48 cuda_13.0.r13.0/compiler.36260728_0")
    assert _key(monkeypatch, _checkout(tmp_path / "c")) != here  # another patch release of the same nvcc


def test_a_build_links_cached_objects_only_when_every_kernel_tu_has_one(tmp_path, monkeypatch):
    ext = _checkout(tmp_path / "repo")
    monkeypatch.setattr(kernel_objects, "EXTENSIONS_DIR", ext)
    monkeypatch.setattr(kernel_objects.toolchain, "nvcc_build", lambda: "V13.0.88 cuda_13.0.r13.0/compiler.36424714_0")
    two = (KernelSource("mine_k.cu", path=ext / "mine" / "k.cu"), KernelSource("mine_j.cu", text=KERNEL),
           KernelSource("host.cpp", text="int host() { return 0; }\n"))
    plan = plan_extensions([BuildRequest("mine", two, "gc_mine", "sm_90a", include_dirs=(str(ext),))])[0]
    cache = tmp_path / "cache"
    assert prebuilt_objects(plan, cache) == []  # no object cache at all

    def put(src):  # an entry as compile_tu leaves one, without running nvcc
        key = kernel_objects.tu_key(src, plan)
        entry = kernel_objects._entry(cache / "objects", src, "sm_90a", key)
        entry.mkdir(parents=True)
        (entry / f"{Path(src.filename).stem}.o").write_bytes(b"\x7fELF")
        (entry / "ptxas.log").write_text("")
        (entry / "tu.json").write_text(f'{{"object": "{Path(src.filename).stem}.o", "seconds": 1.0}}')
        seal(entry, [*kernel_objects.TU_FILES, f"{Path(src.filename).stem}.o"])
        return entry

    put(two[0])
    assert prebuilt_objects(plan, cache) == []  # one kernel TU of two: ninja compiles both
    second = put(two[1])
    found = prebuilt_objects(plan, cache)
    assert [t.source for t in found] == ["mine_k.cu", "mine_j.cu"]  # the .cpp is not a kernel TU
    (second / "mine_j.o").write_bytes(b"\x7fELF cut")  # damaged after it was sealed: not used
    assert prebuilt_objects(plan, cache) == []

    def no_nvcc():
        raise kernel_objects.toolchain.ToolchainError("nvcc not found")

    monkeypatch.setattr(kernel_objects.toolchain, "nvcc_build", no_nvcc)  # the build itself will say so
    assert prebuilt_objects(plan, cache) == []



def _cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:  # triton's wheel ships one
        import triton

        bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        return str(bundled) if bundled.exists() else None
    except ImportError:
        return None


def _sass(path: Path, tool: str) -> str:
    out = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    return "\n".join(line for line in out.splitlines() if "identifier" not in line)  # the source's path


@pytest.mark.compile
@pytest.mark.torch_build
def test_the_build_links_cached_objects_with_the_sass_of_its_own_compile_and_compiles_one_that_does_not_link(tmp_path):
    """`build --objects-only` (or a carried .kcache) leaves the object; the build links it instead of compiling the
    TU, reads its ptxas report, and holds the SASS that compiling the TU through ninja gives. An object that is whole
    by its manifest but does not link is compiled again by the build, which says so. (One test: each build compiles
    a torch binding, half a minute of CI.)"""
    from gemmcompare.implementations import FIXED

    req = FIXED["lab.scalar_coalesced"]().build_request("sm_90a")
    plan = plan_extensions([req])[0]
    objects = kernel_objects.compile_request(req, cache_dir=tmp_path)
    assert isinstance(objects, kernel_objects.KernelObjects) and len(objects.objects) == 1
    good = objects.objects[0].read_bytes()
    entry = objects.tus[0].folder
    objects.objects[0].write_bytes(b"not an object")  # whole by its manifest, but no object a linker can read
    seal(entry, [*kernel_objects.TU_FILES, objects.objects[0].name])
    ninja_built = build_extensions([plan], tmp_path, progress=False)[plan.module_name]
    assert not hasattr(ninja_built, "message"), ninja_built
    log = (ninja_built.path / "build.log").read_text()
    assert log.startswith("1 kernel TU object(s) from the object cache (lab_scalar_coalesced.cu) did not link")
    assert "every TU compiled here instead" in log and (ninja_built.path / "scalar_coalesced.cuda.o").exists()
    assert list(ninja_built.module.entries()) == ["gc_lab_scalar_coalesced"]
    reference = tmp_path / "ninja.so"
    shutil.copy(ninja_built.path / f"{plan.module_name}.so", reference)

    objects.objects[0].write_bytes(good)
    seal(entry, [*kernel_objects.TU_FILES, objects.objects[0].name])
    shutil.rmtree(ninja_built.path)
    linked = build_extensions([plan], tmp_path, progress=False)[plan.module_name]
    assert not hasattr(linked, "message"), linked
    log = (linked.path / "build.log").read_text()
    assert log.startswith("linked 1 kernel TU object(s) from the object cache") and "lab_scalar_coalesced.cu" in log
    assert not (linked.path / "scalar_coalesced.cuda.o").exists()  # ninja compiled no kernel TU
    assert linked.resources == ninja_built.resources  # the registers and spills, read from the object's report
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump to compare the SASS with")
    assert _sass(linked.path / f"{plan.module_name}.so", tool) == _sass(reference, tool)


def test_objects_carried_from_elsewhere_are_read_where_gemmcompare_objects_names_them(tmp_path, monkeypatch):
    from gemmcompare.build.kernel_objects import object_dirs

    own, carried, other = tmp_path / "cache", tmp_path / "kcache" / "objects", tmp_path / "more"
    (own / "objects").mkdir(parents=True)
    carried.mkdir(parents=True)
    monkeypatch.setenv("GEMMCOMPARE_OBJECTS", f"{carried}:{tmp_path / 'absent'}:{other}")
    assert object_dirs(own) == [own / "objects", carried]  # the build's own first; folders that are not there left out
    monkeypatch.delenv("GEMMCOMPARE_OBJECTS")
    assert object_dirs(tmp_path / "empty") == []


@pytest.mark.compile
def test_build_objects_only_compiles_what_the_build_would_and_says_so(tmp_path, capsys):
    from gemmcompare.cli import main

    spec = tmp_path / "small.yaml"
    spec.write_text("name: small\nproblems: [{m: 256, n: 256, k: 256}]\ncontracts: [f16_f32acc_tn]\n"
                    "implementations: [library.cublas, lab.wmma_global, lab.wmma_padded]\n")
    args = ["build", str(spec), "--arch", "sm_90a", "--objects-only", "--cache-dir", str(tmp_path / "kc"), "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "compiled" in out and out.rstrip().splitlines()[-1].startswith("2 kernel TUs compiled, 0 cached, 0 failed")
    assert sorted(p.name.split("_sm_90_")[0] for p in (tmp_path / "kc" / "objects").iterdir()) == [
        "lab_wmma_global", "lab_wmma_padded"]  # cuBLAS's binding has no kernel TU; no torch binding compiled
    assert not [p for p in (tmp_path / "kc").iterdir() if p.name.startswith("gc_")]
    assert main(args) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("0 kernel TUs compiled, 2 cached")
