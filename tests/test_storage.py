"""The storage policy on the CPU: which buffers each implementation gets under `tight` and `aligned`, and
that a kernel needing other buffers pays for its copies inside its launch (the timed callable), with a
fake extension that computes the GEMM from exactly the buffers and leading dimensions it is handed."""

import torch

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order
from gemmcompare.contracts.storage import Storage, plan_operands, policy_geometry
from gemmcompare.dtypes import DType
from gemmcompare.implementations.base import AbiKernel, Constraints, ContractSupport, Operands
from gemmcompare.implementations.library import CublasGemmEx, TorchMatmul
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import parse_spec

TN = BUILTIN_CONTRACTS["f16_f32acc_tn"]
TN_ALIGNED = BUILTIN_CONTRACTS["f16_f32acc_tn_aligned"]
# what a CUTLASS SM90 f16 -> f32 tn configuration declares: K to 8, N to 4 (C rows), 16-byte rows
CUTLASS_LIKE = Constraints(pad_to=(1, 4, 8), ld_multiples=(8, 8, 4))


class FakeKernel(AbiKernel):
    family = "fake"
    entry_symbol = "fake"
    contract_support = ContractSupport(inputs=frozenset({DType.F16}), outputs=frozenset({DType.F32}))

    def __init__(self, variant, constraints=Constraints()):
        super().__init__(variant)
        self.constraints = constraints

    def sources(self):
        return ()


class FakeEntry:
    """Computes C = A @ B in FP32 from the tensors and dims it is handed (as a kernel reads them), and
    records what it saw."""

    def __init__(self, log):
        self.log = log

    def launch(self, a, b, c, dims, codes, alpha, beta, ws, bias, scale_a, scale_b):
        m, n, k, lda, ldb, ldc = dims
        assert (a.stride(0), b.stride(0), c.stride(0)) == (lda, ldb, ldc)
        la = a.as_strided((m, k), (lda, 1)) if codes[0] == 0 else a.as_strided((k, m), (lda, 1)).t()
        lb = b.as_strided((k, n), (ldb, 1)) if codes[1] == 0 else b.as_strided((n, k), (ldb, 1)).t()
        self.log.append({"a_ptr": a.data_ptr(), "b_ptr": b.data_ptr(), "c_ptr": c.data_ptr(), "dims": list(dims),
                         "a_first": float(la[0, 0])})
        c.as_strided((m, n), (ldc, 1)).copy_(la.float() @ lb.float())

    def workspace_bytes(self, *args):
        return 0


class FakeExtension:
    def __init__(self):
        self.log = []

    def entry(self, symbol):
        return FakeEntry(self.log)


def _operands(p: GemmProblem, storage: Storage, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand(p.m, p.k, generator=g) * 2 - 1).half()
    b = (torch.rand(p.k, p.n, generator=g) * 2 - 1).half()
    return Operands(a, b, storage=storage)


def _reference(ops):
    return ops.a.float() @ ops.b.float()


ODD = GemmProblem(39, 51, 41)  # like 3999x5001x4097: nothing divides 8 or 4


def test_policy_geometry_tight_and_aligned():
    assert policy_geometry(3999, 4097, 2, Storage.TIGHT).ld == 4097
    aligned = policy_geometry(3999, 4097, 2, Storage.ALIGNED)
    assert (aligned.ld, aligned.alloc_lines) == (4104, 4000)  # 16-byte rows, whole slack rows
    assert policy_geometry(3999, 5001, 4, Storage.ALIGNED).ld == 5004  # FP32 C: 4 per 16 bytes


def test_plan_cutlass_like_copies_everything_under_tight_and_nothing_under_aligned():
    orders, sizes = (Order.ROW, Order.COL, Order.ROW), (2, 2, 4)
    tight = plan_operands(3999, 5001, 4097, (3999, 5004, 4104), orders, sizes, Storage.TIGHT, (8, 8, 4))
    assert all(tight[w].copy for w in "abc")
    assert (tight["a"].kernel.ld, tight["b"].kernel.ld, tight["c"].kernel.ld) == (4104, 4104, 5004)
    assert "not a multiple of 8" in tight["a"].why
    aligned = plan_operands(3999, 5001, 4097, (3999, 5004, 4104), orders, sizes, Storage.ALIGNED, (8, 8, 4))
    assert not any(aligned[w].copy for w in "abc")  # the zero padding of the shared buffers holds the tails
    # a library with no requirement runs in place under both policies
    for storage in Storage:
        plan = plan_operands(3999, 5001, 4097, (3999, 5001, 4097), orders, sizes, storage)
        assert not any(plan[w].copy for w in "abc")


def test_plan_packed_kernel_copies_under_aligned_only():
    orders, sizes = (Order.ROW, Order.COL, Order.ROW), (2, 2, 4)
    assert not any(p.copy for p in plan_operands(39, 51, 41, (39, 51, 41), orders, sizes, Storage.TIGHT,
                                                  packed=True).values())
    aligned = plan_operands(39, 51, 41, (39, 51, 41), orders, sizes, Storage.ALIGNED, packed=True)
    assert all(p.copy for p in aligned.values()) and aligned["a"].kernel.ld == 41


def test_aligned_every_implementation_gets_the_same_buffers_the_baseline_included():
    ops = _operands(ODD, Storage.ALIGNED)
    ext_lib, ext_cut = FakeExtension(), FakeExtension()
    lib = FakeKernel("lib").prepare(ODD, TN_ALIGNED, ops, ext_lib)
    cut = FakeKernel("cutlass", CUTLASS_LIKE).prepare(ODD, TN_ALIGNED, ops, ext_cut)
    torch_mm = TorchMatmul().prepare(ODD, TN_ALIGNED, ops, None)
    lib.launch()
    cut.launch()
    (l,), (c,) = ext_lib.log, ext_cut.log
    assert (l["a_ptr"], l["b_ptr"]) == (c["a_ptr"], c["b_ptr"])  # the very same A and B
    assert torch_mm.a.data_ptr() == l["a_ptr"] and torch_mm.b.data_ptr() == l["b_ptr"]
    assert l["dims"][3:] == c["dims"][3:] == [48, 48, 52]  # lda, ldb, ldc: 16-byte rows
    assert torch_mm.out.stride(0) == 52
    assert lib.steps == [s for s in lib.steps if s[0] == "kernel"] and [n for n, _ in cut.steps] == ["kernel"]
    assert c["dims"][:3] == [39, 52, 48]  # the padded problem, read in place from the zero padding
    assert cut.executed_flops == 2 * 39 * 52 * 48
    for prepared in (lib, cut):  # the K tail was zeros: both compute the logical product exactly
        torch.testing.assert_close(prepared.output(), _reference(ops), rtol=1e-5, atol=1e-5)
    assert lib.storage_info == {"policy": "aligned", "lda": 48, "ldb": 48, "ldc": 52, "copies_in_timing": []}


def test_tight_the_baseline_gets_the_users_tensors_and_an_aligned_kernel_copies_inside_its_launch():
    ops = _operands(ODD, Storage.TIGHT)
    ext_lib, ext_cut = FakeExtension(), FakeExtension()
    lib = CublasGemmEx().prepare(ODD, TN, ops, ext_lib)
    cut = FakeKernel("cutlass", CUTLASS_LIKE).prepare(ODD, TN, ops, ext_cut)
    user_a, lda = ops.stored("a", Order.ROW)
    user_b, ldb = ops.stored("b", Order.COL)
    lib.launch()
    assert ext_lib.log[0]["a_ptr"] == user_a.data_ptr() and ext_lib.log[0]["dims"][3:] == [41, 41, 51]
    assert [name.split(" (")[0] for name, _ in cut.steps] == ["copy a in", "copy b in", "kernel", "copy c out"]
    # The copies happen in the launch, before the kernel: change the user's A, launch once, and the kernel
    # sees the new A; its result reaches the user's C without any other call.
    user_a.copy_(torch.full_like(user_a, 0.5))
    cut.poison()
    cut.launch()
    seen = ext_cut.log[-1]
    assert seen["a_first"] == 0.5 and seen["a_ptr"] != user_a.data_ptr()
    assert seen["dims"][3:] == [48, 48, 52] and seen["dims"][:3] == [39, 52, 48]
    expected = torch.full((ODD.m, ODD.k), 0.5) @ ops.b.float()
    torch.testing.assert_close(cut.output(), expected, rtol=1e-5, atol=1e-5)
    assert cut.output().stride(0) == 51  # the user's tight C
    assert cut.storage_info["lda"] == 41 and cut.storage_info["kernel_lda"] == 48
    assert len(cut.storage_info["copies_in_timing"]) == 3
    assert "inside the timed region" in cut.notes and "zero-padded to 39x52x48" in cut.notes


def test_poison_reaches_the_kernels_own_output_too():
    ops = _operands(ODD, Storage.TIGHT)

    class Lazy(FakeEntry):  # a kernel that writes nothing after its first launch
        def launch(self, a, b, c, *rest):
            if not self.log:
                super().launch(a, b, c, *rest)
            else:
                self.log.append({})

    ext = FakeExtension()
    ext.entry = lambda symbol: Lazy(ext.log)
    cut = FakeKernel("cutlass", CUTLASS_LIKE).prepare(ODD, TN, ops, ext)
    cut.launch()
    cut.poison()
    cut.launch()  # copies its poisoned buffer out: the stale result of the first launch is gone
    assert torch.isnan(cut.output()).all()


def test_operands_fingerprint_covers_the_zero_padding():
    ops = _operands(ODD, Storage.ALIGNED)
    view, ld = ops.stored("a", Order.ROW)
    full = [t for t in ops.tensors() if t is not None and t.data_ptr() == view.data_ptr()]
    assert full and full[0].shape == (48, 48) and ld == 48  # the whole allocation, padding included
    assert float(full[0][39:].abs().sum()) == 0 and float(full[0][:, 41:].abs().sum()) == 0


def test_rows_record_the_policy_and_leading_dimensions():
    from gemmcompare.runner.rows import storage_lds

    assert storage_lds(GemmProblem(3999, 5001, 4097), TN) == (4097, 4097, 5001)
    assert storage_lds(GemmProblem(3999, 5001, 4097), TN_ALIGNED) == (4104, 4104, 5004)
    nn = BUILTIN_CONTRACTS["f32_strict_nn_aligned"]  # column-major A: lda follows M
    assert storage_lds(GemmProblem(3999, 5001, 4097), nn) == (4000, 4100, 5004)


SPEC = """
name: s
problems: [{m: 8, n: 8, k: 8}]
contracts:
  - f16_f32acc_tn_aligned
  - {name: mine, a: f16, c: f32, layout: tn, storage: %s}
implementations: [library.cublas]
"""


def test_spec_takes_the_policy_by_name_and_by_definition():
    exp = parse_spec(SPEC % "aligned")
    assert [c.storage for c in exp.contracts] == [Storage.ALIGNED, Storage.ALIGNED]
    assert exp.contracts[0].as_dict()["storage"] == "aligned"
    assert "storage aligned" in exp.contracts[0].describe()


def test_spec_rejects_an_unknown_policy_with_the_choices():
    import pytest

    from gemmcompare.errors import SpecError

    with pytest.raises(SpecError) as info:
        parse_spec(SPEC % "alinged")
    assert "storage must be one of ['tight', 'aligned']" in str(info.value) and "aligned" in str(info.value)


def test_a_store_written_before_these_columns_gains_them(tmp_path):
    import sqlite3

    from gemmcompare.results import Result, Status
    from gemmcompare.store import Store

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)  # the results table as an older version made it: no storage columns
    conn.execute("CREATE TABLE results (row_id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, problem TEXT, m INTEGER,"
                 " n INTEGER, k INTEGER, batch INTEGER, contract TEXT, implementation TEXT, family TEXT, params TEXT,"
                 " status TEXT)")
    conn.execute("INSERT INTO results (run_id, problem, status) VALUES ('old', '8x8x8', 'PASS')")
    conn.commit()
    conn.close()
    store = Store(db)
    store.add_result(Result("new", "8x8x8", 8, 8, 8, 1, "f16_f32acc_tn_aligned", "library.cublas", "library", {},
                            Status.PASS, storage="aligned", lda=8, ldb=8, ldc=8, timing_method="cupti"))
    rows = store.results()
    assert rows["storage"].isna().iloc[0] and rows["storage"].iloc[1] == "aligned"
    assert rows["timing_method"].iloc[1] == "cupti"
