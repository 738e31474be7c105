"""Where the compilers and headers are, and the one place compiler flags are decided.

Every build (the JIT extension through torch.utils.cpp_extension, and the plain nvcc compile tests)
takes its flags from `kernel_cuda_flags()`, so a kernel that compiles in CI compiles the same way in a run.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..arch import parse_arch
from ..errors import ToolchainError
from ..paths import ABI_INCLUDE_DIR


# torch's cpp_extension defines these to keep its own half operators apart; CUTLASS and our kernels
# need CUDA's half/bfloat16 operators, so every CUDA TU undoes them (later flags win).
HALF_UNDEFINES = (
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
)

# Kernel TUs include no torch headers, so they can pin C++17 (what CUTLASS is tested with); the binding
# .cpp keeps torch's own standard (C++20 for torch 2.14).
KERNEL_STD = "-std=c++17"


def _has_toolkit(root: Path) -> bool:
    return (root / "bin" / "nvcc").exists() and (root / "include" / "cuda_runtime.h").exists()


@functools.lru_cache(maxsize=None)
def cuda_home() -> Path:
    """The CUDA toolkit's own folder.

    `nvcc` on PATH may be a wrapper script (as on the development machines), from which torch would
    guess the folder above the toolkit; so look for a folder that has both bin/nvcc and the headers.
    """
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(os.path.realpath(nvcc)).parents[1]))
        try:  # a wrapper script that execs the real nvcc: read the path out of it
            # its head only: the real nvcc is a binary of tens of MB, and reading and decoding it whole took
            # 0.45 s of a fully cached build's 0.73 s on the H200 (first-contact/first-answer-d5f69ec/)
            with open(nvcc, "rb") as f:
                head = f.read(4096)
            m = re.search(r"(/\S+)/bin/nvcc", head.decode(errors="ignore")) if head.startswith(b"#!") else None
            if m:
                candidates.append(m.group(1))
        except OSError:
            pass
    candidates += ["/usr/local/cuda"] + sorted((str(p) for p in Path("/usr/local").glob("cuda-*")), reverse=True)
    for c in candidates:
        if c and _has_toolkit(Path(c)):
            return Path(c)
    raise ToolchainError(
        "no CUDA toolkit found: looked for bin/nvcc and include/cuda_runtime.h under CUDA_HOME, CUDA_PATH, "
        "the nvcc on PATH and /usr/local/cuda*. Install the CUDA toolkit or set CUDA_HOME."
    )


def ensure_cuda_home() -> Path:
    """Export CUDA_HOME before torch.utils.cpp_extension is imported (it reads it once, at import)."""
    home = cuda_home()
    os.environ["CUDA_HOME"] = str(home)
    return home


def nvcc_path() -> Path:
    return cuda_home() / "bin" / "nvcc"


@functools.lru_cache(maxsize=None)
def nvcc_version() -> str:
    """'13.0' style release number of the toolkit's nvcc."""
    out = subprocess.run([str(nvcc_path()), "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    if not m:
        raise ToolchainError(f"could not read nvcc's version from:\n{out}")
    return m.group(1)


@functools.lru_cache(maxsize=None)
def nvcc_build() -> str:
    """nvcc's exact build ('V13.0.88 cuda_13.0.r13.0/compiler.36424714_0'): what an object cache shared between
    machines keys on (two patch releases of one version may compile different SASS)."""
    out = subprocess.run([str(nvcc_path()), "--version"], capture_output=True, text=True, check=True).stdout
    version, build = re.search(r"\bV(\d+(?:\.\d+)+)", out), re.search(r"^Build (\S+)", out, re.M)
    if not version:
        raise ToolchainError(f"could not read nvcc's version from:\n{out}")
    return f"V{version.group(1)} {build.group(1) if build else ''}".strip()


def gencode_flags(arch: str) -> list[str]:
    """'sm_90a' -> ['-gencode=arch=compute_90a,code=sm_90a'] (the plain -arch=sm_90a form also runs an
    sm_90 pass that rejects wgmma with nvcc 13.0, so always spell out -gencode)."""
    cc, specific = parse_arch(arch)
    tag = f"{cc}{'a' if specific else ''}"
    return [f"-gencode=arch=compute_{tag},code=sm_{tag}"]


# Kernel TUs keep their host symbols inside their own extension. Without this, template static data
# (CUTLASS 2.x GemmUniversalBase<K>::device_ordinal_ and friends) is emitted as a GNU-unique symbol,
# which the dynamic loader shares between every extension of the process that instantiates the same
# type, even when each is loaded RTLD_LOCAL: the second extension then sees the first one's "already
# initialized" flag and never sets its own kernel's shared-memory attribute. (Seen as a crash of the
# second of three SM80 configurations sharing one Gemm type; the binding, in the same .so, still links
# to the hidden entry points.)
HOST_VISIBILITY = "-Xcompiler=-fvisibility=hidden"


# Kernel TUs are release builds, as CUTLASS's own CMake (Release) and profiler build them. Without
# NDEBUG, CUTLASS 3.x keeps device-side assert()s; the one in the SM90 mainloop (k_tile_count >= 1) is a
# call to __assertfail between wgmma instructions, and ptxas then serializes the whole wgmma pipeline
# ("C7510 Potential Performance Loss", see ptxas.py). The hand-written kernels have no asserts.
RELEASE_DEFINE = "-DNDEBUG"


def kernel_cuda_flags(arch: str, extra: tuple[str, ...] = ()) -> list[str]:
    """nvcc flags for kernel TUs: optimisation, release build (see RELEASE_DEFINE), standard, arch, half
    undefines, ptxas report, hidden host symbols (see HOST_VISIBILITY)."""
    return [
        "-O3",
        RELEASE_DEFINE,
        KERNEL_STD,
        "--expt-relaxed-constexpr",
        "-lineinfo",
        "-Xptxas=-v",
        HOST_VISIBILITY,
        *gencode_flags(arch),
        *HALF_UNDEFINES,
        *extra,
    ]


LIBRARY_HEADERS = ("cublas_v2.h", "cusparse.h")  # torch's CUDA context header includes both


@functools.lru_cache(maxsize=None)
def library_include_dirs() -> list[str]:
    """Header folders for cuBLAS/cuSPARSE when the toolkit lacks them (a toolkit without the math
    libraries): torch's CUDA wheels ship them under site-packages/nvidia/cu*/include, or one folder per
    library (nvidia/cublas/include, ...) in older layouts."""
    dirs: list[str] = []
    for header in LIBRARY_HEADERS:
        if (cuda_home() / "include" / header).exists():
            continue
        for base in map(Path, sys.path):
            hits = [c for c in base.glob("nvidia/*/include") if (c / header).exists()]
            if hits:
                if str(hits[0]) not in dirs:
                    dirs.append(str(hits[0]))
                break
    return dirs


@functools.lru_cache(maxsize=None)
def cutlass_root() -> Path:
    """The folder of the installed nvidia-cutlass package's C++ sources (cutlass_library/source)."""
    try:
        import cutlass_library  # noqa: F401  (shipped by the nvidia-cutlass wheel)
    except ImportError:
        raise ToolchainError(
            "the CUTLASS headers come from the Python package 'nvidia-cutlass', which is not installed: "
            "pip install nvidia-cutlass==4.2.0.0"
        ) from None
    root = Path(cutlass_library.__file__).resolve().parent / "source"
    if not (root / "include" / "cutlass" / "cutlass.h").exists():
        raise ToolchainError(f"nvidia-cutlass is installed but {root}/include/cutlass/cutlass.h is missing")
    return root


def cutlass_include_dirs() -> list[str]:
    root = cutlass_root()
    return [str(root / "include"), str(root / "tools" / "util" / "include")]


_VERSION_LINE = re.compile(r"^(__version__|cuda)\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", re.M)


@functools.lru_cache(maxsize=None)
def torch_versions() -> dict[str, str | None]:
    """torch.__version__ and torch.version.cuda of the torch this interpreter would import, read from its
    torch/version.py without importing torch (seconds, where a cache hit should cost milliseconds).

    find_spec resolves `torch` exactly as `import torch` would, and version.py is the file torch takes both
    strings from; where it cannot be read (an unusual install), torch itself is imported."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
        folder = Path(spec.origin).parent if spec is not None and spec.origin else None
        found = dict(_VERSION_LINE.findall((folder / "version.py").read_text())) if folder else {}
    except (OSError, ValueError, ImportError):
        found = {}
    if "__version__" in found:
        return {"torch": found["__version__"], "cuda": found.get("cuda")}
    import torch

    return {"torch": str(torch.__version__), "cuda": torch.version.cuda}


def torch_version() -> str:
    return torch_versions()["torch"]


def cutlass_version() -> str:
    try:
        from importlib.metadata import version

        return version("nvidia-cutlass")
    except Exception:
        return "absent"


def compile_object(source: Path, arch: str, out: Path, extra_flags: tuple[str, ...] = (),
                   include_dirs: tuple[str, ...] = (), uses_cutlass: bool = False, timeout: float = 900):
    """Compile one kernel TU to an object with plain nvcc, exactly as a JIT build would compile it.

    Used by the compile tests (CI has nvcc but no GPU). Returns the CompletedProcess; stdout+stderr hold
    the ptxas report or the compiler's errors.
    """
    incs = [str(ABI_INCLUDE_DIR), *include_dirs, *(cutlass_include_dirs() if uses_cutlass else [])]
    cmd = [str(nvcc_path()), "-c", str(source), "-o", str(out), *kernel_cuda_flags(arch, tuple(extra_flags))]
    cmd += [f"-I{d}" for d in incs]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def compiler_errors(log: str, limit: int = 40) -> str:
    """The lines of a build log that say what went wrong (nvcc/gcc errors with file:line), trimmed."""
    keep = [ln for ln in log.splitlines() if "error" in ln.lower() or "undefined" in ln.lower()]
    text = "\n".join(keep[:limit]) if keep else "\n".join(log.splitlines()[-limit:])
    return text.strip()
