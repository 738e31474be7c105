from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

# extensions/ (kernel sources, the C ABI header) and cutlass_configs/ (configurations and templates)
# are data the package builds from at run time. In a checkout or an editable install they are found
# beside the package; a regular install carries them as package data under gemmcompare/_data/.
DATA_DIRS = {"extensions": "gemmcompare._data.extensions", "cutlass_configs": "gemmcompare._data.cutlass_configs"}

setup(
    name="gemmcompare",
    version="0.1.0",
    description="Compare GEMM kernels (hand-written CUDA, CUTLASS/CuTe, cuBLAS) under one precision, "
    "correctness and timing contract",
    long_description=(HERE / "README.md").read_text() if (HERE / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["gemmcompare", "gemmcompare.*"]) + list(DATA_DIRS.values()),
    package_dir={pkg: folder for folder, pkg in DATA_DIRS.items()},
    package_data={pkg: ["**/*"] for pkg in DATA_DIRS.values()},
    # Lower bounds: the oldest releases the whole test suite passes with (.ci/floor.txt, run by .ci/run beside the
    # newest releases; tests/test_packaging.py keeps the two lists equal). No upper bounds: CI takes the newest.
    install_requires=[
        "torch>=2.11.0",
        "numpy>=2.0.2",
        "ninja>=1.11.1.1",
        "nvidia-cutlass>=4.2.0.0",
        "pandas>=2.2.3",
        "matplotlib>=3.10.0",
        "pyyaml>=6.0",
        "tqdm>=4.66.0",
        "nvidia-ml-py>=12.560.30",
    ],
    extras_require={
        # the tests run the nvidia-matmul-heuristics adapter and the tuned rows' second opinion against the real
        # package (2 MB, CPU only), not only a stand-in
        "test": ["pytest>=8.0.0", "nvidia-matmul-heuristics>=0.1.0.27"],
        # `run --cluster`: Dask's scheduler (pure Python but tornado; about 3 MB of wheels)
        "cluster": ["dask>=2024.8.0", "distributed>=2024.8.0"],
        # NVIDIA's own estimate beside gemmcompare's prediction on CUTLASS rows (gemmcompare/model/heuristics.py),
        # and a second opinion when a tuned row narrows its candidates (gemmcompare/tuning/select.py)
        "heuristics": ["nvidia-matmul-heuristics>=0.1.0.27"],
    },
    entry_points={"console_scripts": ["gemmcompare = gemmcompare.cli:main"]},
)
