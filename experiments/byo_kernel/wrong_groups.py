"""Deliberately wrong grouped callables: each must FAIL, the harness judges every group (both layouts).

They read the group sizes on the host (.tolist(): a synchronization, which the honest example avoids), then
compute each group's rows with one torch.mm in FP32, cast to c's dtype."""

import torch


def _groups(a, c, m_offsets, masked_counts):
    """(group, its rows of a, its rows of c, M) for every group: stacked row ranges, or each slab's first M rows."""
    if masked_counts is not None:
        return [(g, a[g, :m], c[g, :m], m) for g, m in enumerate(masked_counts.tolist())]
    o = m_offsets.tolist()
    return [(g, a[o[g]:o[g + 1]], c[o[g]:o[g + 1]], o[g + 1] - o[g]) for g in range(len(o) - 1)]


def _product(a_rows, weight, dtype):
    return (a_rows.float() @ weight.float()).to(dtype)


def skips_small(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    """Leaves groups of fewer than 16 tokens unwritten (a kernel whose M tile quietly drops short groups)."""
    for g, a_g, c_g, m in _groups(a, c, m_offsets, masked_counts):
        if m >= 16:
            c_g.copy_(_product(a_g, b[g], c.dtype))


def writes_past(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    """Writes 8 rows past each group's end. Stacked: into the next group's rows, groups last to first, so the
    next group finds its first rows computed with this group's weights. Masked: into the group's padding, with
    its last row's values (a store predicate off by 8 rows)."""
    for g, a_g, c_g, m in reversed(_groups(a, c, m_offsets, masked_counts)):
        if masked_counts is not None:
            c_g.copy_(_product(a_g, b[g], c.dtype))
            if m:
                c[g, m:m + 8] = c_g[-1]
            continue
        lo = int(m_offsets[g])
        end = min(lo + m + 8, a.shape[0])
        c[lo:end] = _product(a[lo:end], b[g], c.dtype)


def ignores_last(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    """Computes every group but the last (a loop bound off by one)."""
    for g, a_g, c_g, m in _groups(a, c, m_offsets, masked_counts)[:-1]:
        c_g.copy_(_product(a_g, b[g], c.dtype))


def fp16_accumulation(a, b, c, alpha=1.0, beta=0.0, m_offsets=None, masked_counts=None):
    """The first non-empty group's products are summed in an FP16 accumulator (its running sum rounded to FP16
    after every 16 of K); the other groups are right."""
    first = True
    for g, a_g, c_g, m in _groups(a, c, m_offsets, masked_counts):
        if first and m:
            first = False
            acc = torch.zeros(m, b.shape[2], dtype=torch.float16, device=c.device)
            for k0 in range(0, a.shape[-1], 16):
                acc = (acc.float() + a_g[:, k0:k0 + 16].float() @ b[g][k0:k0 + 16].float()).half()
            c_g.copy_(acc.to(c.dtype))
        else:
            c_g.copy_(_product(a_g, b[g], c.dtype))
