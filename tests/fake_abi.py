"""A fake extension for the generic C ABI binding (CPU tests of what an entry is handed: test_batched.py,
test_grouped_binding.py). Its entry logs (dims, the grouped tensors as (dtype, device, values)) and computes what
the ABI describes, tn (A row-major, B K-major, C row-major): a 2-D problem (6 dims), a batched one (10 dims:
batch and batch strides), or a grouped one (11 dims: each group's C_g = A_g B_g^T from the offsets and stride_b)."""


class FakeEntry:
    def __init__(self, log):
        self.log = log

    def workspace_bytes(self, *args):  # a kernel with a workspace (CUTLASS's) is asked first: it needs none here
        return 0

    def launch(self, a, b, c, dims, codes, alpha, beta, ws, bias, scale_a, scale_b, *grouped):
        self.log.append((list(dims), [(t.dtype, t.device.type, t.tolist()) for t in grouped]))
        if len(dims) == 11:
            offsets, m_host = grouped
            m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c, groups = dims
            assert (batch, stride_a, stride_c) == (1, 0, 0) and m == int(m_host.sum()) == int(offsets[-1])
            for g in range(groups):
                lo, hi = int(offsets[g]), int(offsets[g + 1])
                la = a.as_strided((hi - lo, k), (lda, 1), a.storage_offset() + lo * lda)
                lb = b.as_strided((n, k), (ldb, 1), b.storage_offset() + g * stride_b)
                c.as_strided((hi - lo, n), (ldc, 1), c.storage_offset() + lo * ldc).copy_(la.float() @ lb.float().t())
            return
        assert not grouped
        m, n, k, lda, ldb, ldc, batch, sa, sb, sc = dims if len(dims) == 10 else (*dims, 1, 0, 0, 0)
        for i in range(batch):
            la = a.as_strided((m, k), (lda, 1), a.storage_offset() + i * sa)
            lb = b.as_strided((n, k), (ldb, 1), b.storage_offset() + i * sb).t()
            c.as_strided((m, n), (ldc, 1), c.storage_offset() + i * sc).copy_(la.float() @ lb.float())


class FakeExtension:
    def __init__(self):
        self.log = []

    def entry(self, symbol):
        return FakeEntry(self.log)
