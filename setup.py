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
    extras_require={
        "test": ["pytest"],
        # `run --cluster`: Dask's scheduler (pure Python but tornado; about 3 MB of wheels)
        "cluster": ["dask>=2024.8", "distributed>=2024.8"],
        # NVIDIA's own estimate beside gemmcompare's prediction on CUTLASS rows (gemmcompare/model/heuristics.py)
        "heuristics": ["nvidia-matmul-heuristics"],
    },
    entry_points={"console_scripts": ["gemmcompare = gemmcompare.cli:main"]},
)
