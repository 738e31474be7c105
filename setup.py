from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def data_files_under(*roots):
    """Kernel sources, templates and configurations travel with the package: an installed copy builds
    from them at run time."""
    out = []
    for root in roots:
        for path in (HERE / root).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                out.append(str(path.relative_to(HERE)))
    return out


setup(
    name="gemmcompare",
    version="0.1.0",
    description="Compare GEMM kernels (hand-written CUDA, CUTLASS/CuTe, cuBLAS) under one precision, "
    "correctness and timing contract",
    long_description=(HERE / "README.md").read_text() if (HERE / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["gemmcompare", "gemmcompare.*"]),
    # extensions/ and cutlass_configs/ sit beside the package: install them as package data under
    # gemmcompare/_data is avoided on purpose; the toolchain locates them relative to the checkout, so
    # installs are editable (pip install -e .), as the README says.
    include_package_data=True,
    package_data={"gemmcompare": []},
    data_files=[("share/gemmcompare/" + str(Path(f).parent), [f]) for f in data_files_under("extensions", "cutlass_configs")],
    install_requires=[
        "torch",
        "ninja",
        "nvidia-cutlass",
        "pandas",
        "matplotlib",
        "pyyaml",
        "tqdm",
        "nvidia-ml-py",
    ],
    extras_require={"test": ["pytest"]},
    entry_points={"console_scripts": ["gemmcompare = gemmcompare.cli:main"]},
)
