"""gemmcompare: compare GEMM kernels honestly, under one precision, correctness and timing contract."""

__version__ = "0.1.0"
