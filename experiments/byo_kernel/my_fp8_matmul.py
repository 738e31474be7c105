"""A user's own FP8 GEMM in Python, for gemmcompare's `python` family (fp8_own.yaml; docs/fp8.md, "Your own FP8
kernel").

Under an FP8 contract the harness calls matmul(a, b, c, alpha=..., beta=..., scale_a=..., scale_b=...): a is
the m x k e4m3 A (row-major), b the k x n e4m3 B (column-major), c the m x n output (bf16 here, row-major), and
scale_a, scale_b the FP32 dequantization scales (A ~= a * scale_a): (1, 1) each per tensor, (m, 1) and (1, n)
per row/column. Both broadcast over the m x n product, so one line applies either; the entry declares
`scalings: [tensor, rowcol]` (block scales change along K: a product of the whole of K cannot take them).

Naive and correct: the FP8 values are exact in FP32 (and in TF32: 4 significant bits), so the FP32 matmul
rounds only its sums, in FP32.
"""

import torch


def matmul(a, b, c, alpha=1.0, beta=0.0, *, scale_a, scale_b):
    acc = torch.matmul(a.float(), b.float())
    c.copy_(acc.mul_(scale_a).mul_(scale_b).mul_(alpha))  # beta is 0 under every FP8 contract
