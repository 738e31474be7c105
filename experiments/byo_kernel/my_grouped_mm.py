"""A grouped `python` callable (`grouped: true` in its spec entry; docs/grouped.md "A Python callable").

Contiguous layout: a is (sum M, k), every group's rows stacked; b is (groups, k, n), each weight column-major
(K-major); c is (sum M, n); m_offsets is an int32 device tensor of groups + 1 cumulative Ms from 0, so group g is
rows m_offsets[g] .. m_offsets[g+1]. Masked layout: a is (groups, capacity, k), c (groups, capacity, n), and
masked_counts holds each group's M (rows past it are padding: a's hold NaN, c's must keep the NaN poison, or get
what those NaN rows give). torch._grouped_mm takes exactly these operands (offs = each group's end); it returns a
new tensor, so the result is copied into c, on the harness's stream, with no host synchronization.

torch._grouped_mm writes its input dtype only (an out_dtype other than mat_a's is refused): this callable is for
a BF16-out contract (bf16_bf16out_f32acc_tn). Under an FP32-out one, rounding its BF16 result up would fail the
contract's bound, so that contract needs another kernel (a Triton grouped GEMM writing FP32, say)."""

import torch


def grouped_mm(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    offs = None if masked_counts is not None else m_offsets[1:]  # masked: the 3-D form, one group per slab
    c.copy_(torch._grouped_mm(a, b, offs=offs))
