"""CUTLASS SM90 FP8 configurations (kernel template sm90_fp8, cutlass_configs/sm90_fp8.yaml; issue 26): what they
render, what they validate, which contracts they run (per-tensor scales; fast accumulation only where the contract
allows it) and how the scales reach the kernel through the C ABI. No GPU: tests/test_gpu_fp8_cutlass.py runs them."""

from __future__ import annotations

import re

import pytest
import torch

from gemmcompare.build.binding import EntryPoint, render_binding
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Scaling
from gemmcompare.contracts.quantize import quantize
from gemmcompare.cutlass import render
from gemmcompare.cutlass.catalog import catalog, lookup
from gemmcompare.cutlass.config import ConfigError, CuteSm80Config, Sm80Config, Sm90Config, Sm90Fp8Config
from gemmcompare.dtypes import DType
from gemmcompare.implementations.base import AbiPrepared, Operands, Skip, abi_codes
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.paths import ABI_INCLUDE_DIR
from gemmcompare.plan import make_plan
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import parse_spec

PROMOTE, FAST = "sm90_fp8_coop_128x128x128_c1x1", "sm90_fp8_coop_128x256x128_c1x1_fastacc"
STRICT, FASTACC = "e4m3_bf16out_f32acc_tn_tensor", "e4m3_bf16out_f32acc_tn_tensor_fastacc"
P = GemmProblem(4096, 4096, 4096)


def fp8_entries():
    return {n: e for n, e in catalog().items() if e.config.TEMPLATE == "sm90_fp8"}


def kernel(name, **fields):
    entry = lookup(name)
    return CutlassKernel(entry.resolve(fields), entry.name)


# -- the catalog and what it renders ----------------------------------------------------------------------

def test_the_catalog_has_promoting_and_fast_entries_of_both_schedules_and_clusters():
    configs = [e.config for e in fp8_entries().values() if e.config.scaling == "tensor"]
    assert {(c.schedule, c.accumulation) for c in configs} == {
        (s, a) for s in ("cooperative", "pingpong") for a in ("promote", "fast")}
    assert {c.cluster for c in configs} == {(1, 1), (2, 1), (1, 2)}
    assert all(c.tile[2] == 128 and c.dtype == "e4m3" and c.layout == "tn" and c.alignment == 16 for c in configs)
    for name, entry in fp8_entries().items():
        assert name.endswith("_fastacc") == (entry.config.accumulation == "fast"), name
        assert "_fp8_" in entry.config.procedural_name
        assert ("fastacc" if entry.config.fast_accum else "promote") in entry.config.kernel_name
        assert ("_blockwise_" in name) == ("_blockwise_" in entry.config.kernel_name) == (entry.config.scaling == "block")


def test_the_strict_set_has_the_widest_promoting_tiles_of_both_schedules_in_every_cluster_shape():
    """Issue 43's strict set: 128x192 cooperative and 64x192 ping-pong (two accumulator tiles of 192 registers per
    consumer thread, the most that fit: both kernels compiled without spills with nvcc 13.0) and the 128-column tiles,
    each with clusters 1x1, 2x1 and 1x2; the 128x256 cooperative tile stays refused (it spilled 816 bytes)."""
    promote = {(c.schedule, c.tile, c.cluster) for c in (e.config for e in fp8_entries().values())
               if c.scaling == "tensor" and c.accumulation == "promote"}
    assert promote == {(s, t, cl) for s, t in (("cooperative", (128, 128, 128)), ("cooperative", (128, 192, 128)),
                                                 ("pingpong", (64, 128, 128)), ("pingpong", (64, 192, 128)))
                       for cl in ((1, 1), (2, 1), (1, 2))}
    for m, n, sched in ((128, 192, "cooperative"), (64, 192, "pingpong")):
        threads = 256 if sched == "cooperative" else 128
        assert 2 * m * n // threads == 192  # the promoting mainloop's sums and partials, FP32, per consumer thread
    for name in ("sm90_fp8_coop_128x192x128_c1x2", "sm90_fp8_pp_64x192x128_c2x1"):
        impl = kernel(name)
        assert impl.supports(P, BUILTIN_CONTRACTS[STRICT]) and impl.supports(P, BUILTIN_CONTRACTS[FASTACC])
        text = render.render(lookup(name).config)[0].text
        assert "using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecialized" in text and "FastAccum" not in text
        assert re.search(r"using ClusterShape = cute::Shape<cute::_(\d), cute::_(\d), cute::_1>;", text).groups() == \
            tuple(str(d) for d in lookup(name).config.cluster)
        assert "cute::Shape<cute::_%d, cute::_192, cute::_128>" % lookup(name).config.tile[0] in text


def test_fast_accumulation_renders_the_fp8fastaccum_schedule_and_promote_the_plain_one():
    for name, entry in fp8_entries().items():
        text = render.render(entry.config)[0].text
        schedule = re.search(r"using KernelSchedule = (\S+);", text).group(1)
        base = {"cooperative": "Cooperative", "pingpong": "Pingpong"}[entry.config.schedule]
        suffix = ("FP8BlockScaledAccum" if entry.config.scaling == "block" else
                  "FP8FastAccum" if entry.config.fast_accum else "")
        expected = f"cutlass::gemm::KernelTmaWarpSpecialized{base}{suffix}"
        assert schedule == expected, name


def test_the_kernel_reads_both_scales_from_the_abi_inside_its_launch():
    kernel_tu, entry_tu = render.render(lookup(PROMOTE).config)
    text = kernel_tu.text
    assert "using ElementA = cutlass::float_e4m3_t;" in text and "using ElementB = cutlass::float_e4m3_t;" in text
    assert "using ElementD = cutlass::bfloat16_t;" in text and "using ElementAccumulator = float;" in text
    assert "Sm90ScalarBroadcast<\n    ElementCompute, cute::Stride<cute::_0, cute::_0, cute::_0>, 3>" in text
    assert "alpha_scales.scalar_ptrs[1] = args->scale_a;" in text and "alpha_scales.scalar_ptrs[2] = args->scale_b;" in text
    assert "EpilogueSchedule, ScaledAcc>::CollectiveOp" in text
    assert "args->scaling != GC_SCALING_TENSOR" in text and "args->dtype_a != GC_E4M3" in text
    assert "per-tensor scales, FP32 promotion" in text  # the wrong-contract message says what it computes
    assert "${" not in text and "${" not in entry_tu.text
    e5m2 = render.render(lookup(PROMOTE).resolve({"dtype": "e5m2", "out": "f32"}))[0].text
    assert "using ElementA = cutlass::float_e5m2_t;" in e5m2 and "args->dtype_a != GC_E5M2" in e5m2
    assert "using ElementD = float;" in e5m2


def test_the_sm90_template_renders_as_before():
    """FP8 is a template of its own: the sm90 kernel TU has no scales (its golden files are unchanged)."""
    text = render.render(lookup("sm90_coop_128x256x64_c1x1").config)[0].text
    assert "scale_a" not in text and "arguments.epilogue.thread.alpha = ElementCompute(args->alpha);" in text


# -- validation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields, words", [
    ({"layout": "nt"}, "K-major operands only"),
    ({"schedule": "tma_ws", "epilogue": "nosmem"}, "cooperative or pingpong"),
    ({"epilogue": "nosmem"}, "epilogue tma"),
    ({"tile": [128, 128, 256]}, "tile K 256 for e4m3 must be one of 64, 128"),
    ({"tile": [128, 256, 128]}, "two 128x256 accumulator tiles"),  # promote: 256 registers per thread
    ({"tile": [128, 128, 128], "schedule": "pingpong"}, "two 128x128 accumulator tiles"),
    ({"dtype": "f16"}, "dtype f16 is not available in kernel template sm90_fp8 (takes e4m3, e5m2)"),
    ({"acc": "f16"}, "acc f16 needs dtype f16"),
    ({"accumulation": "sometimes"}, "accumulation: expected one of ['promote', 'fast']"),
])
def test_invalid_fp8_configurations_say_why(fields, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        Sm90Fp8Config.from_fields({"tile": [128, 128, 128], "schedule": "cooperative", **fields})


def test_fast_accumulation_takes_the_tiles_promotion_cannot_hold():
    config = Sm90Fp8Config.from_fields({"tile": [128, 256, 128], "accumulation": "fast"})
    assert config.fast_accum and config.resolved_stages() >= 3


@pytest.mark.parametrize("cls", [Sm80Config, Sm90Config, CuteSm80Config])
def test_fp8_in_another_template_is_a_config_error_that_points_at_sm90_fp8(cls):
    with pytest.raises(ConfigError, match=r"dtype e4m3 is not available .* \(FP8: kernel template sm90_fp8"):
        cls.from_fields({"dtype": "e4m3"})


# -- contracts: per-tensor scales, accumulation ----------------------------------------------------------

def test_a_promoting_entry_runs_strict_and_fastacc_per_tensor_contracts_and_nothing_else():
    impl = kernel(PROMOTE)
    assert impl.supports(P, BUILTIN_CONTRACTS[STRICT]) and impl.supports(P, BUILTIN_CONTRACTS[FASTACC])
    for name in ("e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_block_fastacc"):
        s = impl.supports(P, BUILTIN_CONTRACTS[name])
        assert not s and "scaling" in s.reason and "tensor" in s.reason, name
        assert "sm90_fp8_blockwise_" in s.reason and "row/column scales" in s.reason and "not built yet" in s.reason
    s = impl.supports(P, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"])
    assert not s and "inputs bf16/bf16 not supported (takes e4m3)" in s.reason
    s = impl.supports(P, BUILTIN_CONTRACTS["e4m3_f32out_f32acc_tn_tensor"])
    assert not s and "output f32" in s.reason  # out is compiled in: the spec derives it from the contract


def test_a_fast_accumulation_entry_is_a_skip_under_a_strict_contract():
    impl = kernel(FAST)
    assert impl.supports(P, BUILTIN_CONTRACTS[FASTACC])
    s = impl.supports(P, BUILTIN_CONTRACTS[STRICT])
    assert isinstance(s, Skip) and "fast accumulation" in s.reason and "forbids" in s.reason and "_fastacc" in s.reason
    assert "fast accumulation" in impl.contracts_summary() and "scaling tensor" in impl.contracts_summary()
    assert "FP32-promoted accumulation" in kernel(PROMOTE).contracts_summary()


def test_rows_that_take_no_fp8_contract_still_say_inputs():
    s = kernel("sm90_coop_128x256x64_c1x1").supports(P, BUILTIN_CONTRACTS[STRICT])
    assert not s and "inputs e4m3/e4m3 not supported" in s.reason


def _spec(contracts, *entries):
    lines = "\n".join(f"  - {e}" for e in entries)
    return parse_spec(f"name: t\nproblems: [{{m: 4096, n: 4096, k: 4096}}]\ncontracts: [{', '.join(contracts)}]\n"
                      f"implementations:\n{lines}\n", "t.yaml")


def _cells(exp):
    return {(c.contract.name, c.implementation.name): c.support for c in make_plan(exp).cells}


def test_the_planner_keeps_fp8_entries_to_fp8_contracts_and_the_others_away_from_them():
    contracts = ["bf16_bf16out_f32acc_tn", STRICT, FASTACC, "e5m2_f32out_f32acc_tn_tensor",
                 "e4m3_bf16out_f32acc_tn_rowcol"]
    exp = _spec(contracts, f"cutlass: {{config: {PROMOTE}}}", f"cutlass: {{config: {FAST}}}",
                "cutlass: {config: sm90_coop_128x256x64_c1x1}")
    cells = _cells(exp)
    runs = {(c, i) for (c, i), s in cells.items() if s}
    fp8 = {(c, i) for c, i in runs if "_fp8_" in i}
    assert {c for c, _ in runs - fp8} == {"bf16_bf16out_f32acc_tn"}  # sm90 bf16: its own contract only
    assert ("e5m2_f32out_f32acc_tn_tensor", next(i for c, i in fp8 if c.startswith("e5m2"))) in fp8
    e5m2 = [i for c, i in fp8 if c.startswith("e5m2")]
    assert len(e5m2) == 1 and "e5m2_f32_f32" in e5m2[0] and "promote" in e5m2[0]  # derived: e5m2 in, f32 out
    assert {c for c, i in fp8 if "fastacc" in i} == {FASTACC}
    assert {c for c, i in fp8 if "promote" in i} == {STRICT, FASTACC, "e5m2_f32out_f32acc_tn_tensor"}
    reasons = {(c, i): s.reason for (c, i), s in cells.items() if not s}
    assert any(c == STRICT and "fast accumulation" in r for (c, i), r in reasons.items())
    assert any(c == "e4m3_bf16out_f32acc_tn_rowcol" and "scaling rowcol" in r for (c, i), r in reasons.items())
    assert any(c == "bf16_bf16out_f32acc_tn" and "_fp8_" in i and "inputs bf16/bf16" in r for (c, i), r in reasons.items())
    assert any(c == STRICT and "_fp8_" not in i and "inputs e4m3/e4m3" in r for (c, i), r in reasons.items())


def test_config_auto_finds_the_fp8_entries_under_fp8_contracts():
    exp = _spec(["bf16_bf16out_f32acc_tn", STRICT, FASTACC], "cutlass: {config: auto}")
    for tuned in exp.implementations:
        for contract in exp.contracts:
            if tuned.derived_for is not None and contract.name not in tuned.derived_for:
                continue
            usable = [c for c in tuned.candidates if c.supports(P, contract)]
            names = {c.catalog_name for c in usable}
            if contract.name == "bf16_bf16out_f32acc_tn":
                assert names and not any(n.startswith("sm90_fp8") for n in names)
            else:
                entries = {n for n, e in fp8_entries().items()
                           if (contract.fast_accum or not e.config.fast_accum) and e.config.scaling == "tensor"}
                assert names == entries, contract.name


# -- the C ABI ----------------------------------------------------------------------------------------------

def test_scaling_codes_match_the_header():
    header = (ABI_INCLUDE_DIR / "gemmcompare" / "gemm_abi.h").read_text()
    codes = dict(re.findall(r"GC_SCALING_(\w+) = (\d+)", header))
    assert {s.name: s.abi_code for s in Scaling} == {k: int(v) for k, v in codes.items()}
    assert "const float* scale_a;" in header and "const float* scale_b;" in header
    assert abi_codes(BUILTIN_CONTRACTS[STRICT])[-1] == 1 and abi_codes(BUILTIN_CONTRACTS["f16_f32acc_tn"])[-1] == 0
    assert len(abi_codes(BUILTIN_CONTRACTS[STRICT])) == 10


def test_the_binding_hands_the_scales_over():
    text = render_binding([EntryPoint("gc_x", True)])
    assert "codes.size() == 10" in text and "args.scaling = static_cast<gc_scaling>(codes[9]);" in text
    assert "args.scale_a = scale_a.numel() ? static_cast<const float*>(scale_a.data_ptr()) : nullptr;" in text


class _Entry:
    def __init__(self, log):
        self.log = log

    def launch(self, a, b, c, dims, codes, alpha, beta, ws, bias, scale_a, scale_b):
        self.log.append({"codes": list(codes), "scale_a": scale_a, "scale_b": scale_b, "dtype": a.dtype})

    def workspace_bytes(self, *args):
        return 0


class _Extension:
    def __init__(self):
        self.log = []

    def entry(self, symbol):
        return _Entry(self.log)


def test_an_abi_kernel_gets_the_contracts_own_scale_tensors():
    contract = BUILTIN_CONTRACTS[STRICT]
    p = GemmProblem(64, 32, 128)
    g = torch.Generator().manual_seed(0)
    a, sa = quantize(torch.randn(p.m, p.k, generator=g), DType.E4M3, Scaling.TENSOR, "a")
    b, sb = quantize(torch.randn(p.k, p.n, generator=g), DType.E4M3, Scaling.TENSOR, "b")
    ops = Operands(a, b, storage=contract.storage, scale_a=sa, scale_b=sb)
    ext = _Extension()
    AbiPrepared(kernel(PROMOTE), p, contract, ops, ext).launch()
    (call,) = ext.log
    assert call["scale_a"] is sa and call["scale_b"] is sb  # the very inputs, no copy: the launch reads them
    assert call["codes"][9] == Scaling.TENSOR.abi_code and call["dtype"] == torch.float8_e4m3fn
    plain = BUILTIN_CONTRACTS["f16_f32acc_tn"]
    ops16 = Operands(torch.zeros(p.m, p.k).half(), torch.zeros(p.k, p.n).half(), storage=plain.storage)
    AbiPrepared(kernel("sm90_coop_128x256x64_c1x1"), p, plain, ops16, ext).launch()
    assert ext.log[-1]["scale_a"].numel() == 0 and ext.log[-1]["codes"][9] == 0


def test_the_model_reads_an_fp8_row():
    from gemmcompare.model.kernels import kernel_from_row

    impl = kernel(PROMOTE)
    shape = kernel_from_row({"family": "cutlass", "implementation": impl.name, "params": impl.params,
                             "contract": STRICT})
    assert shape.instruction == "wgmma" and shape.block_tile == (128, 128, 128) and shape.input_dtype == "e4m3"


# -- block scales (scaling block: CUTLASS's FP8BlockScaledAccum mainloop) ---------------------------------------

BLOCKWISE = "sm90_fp8_blockwise_coop_128x128x128_c1x1"
BLOCK, BLOCK_FASTACC = "e4m3_bf16out_f32acc_tn_block", "e4m3_bf16out_f32acc_tn_block_fastacc"


def blockwise_entries():
    return {n: e for n, e in fp8_entries().items() if e.config.scaling == "block"}


def test_the_blockwise_entries_promote_with_128x128_tiles():
    entries = blockwise_entries()
    assert set(entries) == {BLOCKWISE, "sm90_fp8_blockwise_coop_128x128x128_c1x2"}
    for entry in entries.values():
        c = entry.config
        assert c.accumulation == "promote" and not c.fast_accum and c.tile == (128, 128, 128) and c.stages == "auto"
        assert c.scalings == {Scaling.BLOCK} and "_coop_blockwise_promote_" in c.kernel_name
        assert c.resolved_stages() == 6  # what the builder's compute_stage_count_with_blockwise_scale gives (ptxas: 6)


def test_the_blockwise_kernel_reads_both_scale_tensors_in_its_mainloop():
    kernel_tu, entry_tu = render.render(lookup(BLOCKWISE).config)
    text = kernel_tu.text
    assert kernel_tu.filename.endswith("_coop_blockwise_promote_epitma_stauto_persistent_tn_align16_kernel.cu")
    assert "using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum;" in text
    assert "ElementA, cute::tuple<LayoutA, LayoutSFA>, AlignmentA," in text
    assert "ElementB, cute::tuple<LayoutB, LayoutSFB>, AlignmentB," in text
    assert "args->scale_a, ScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(m, n, k, 1))," in text
    assert "args->scale_b, ScaleConfig::tile_atom_to_shape_SFB(cute::make_shape(m, n, k, 1))}," in text
    assert "arguments.epilogue.thread.alpha = ElementCompute(args->alpha);" in text  # D = alpha * acc
    assert "Sm90ScalarBroadcast" not in text and "scalar_ptrs" not in text  # no per-tensor scalar in the epilogue
    assert "StageCountAutoCarveout" in text
    assert "args->scaling != GC_SCALING_BLOCK" in text and "block scales scale_a and scale_b are null" in text
    assert "1x128/128x128 block scales, FP32 promotion" in text
    assert "${" not in text and "${" not in entry_tu.text
    # the per-tensor kernels' TU is unchanged by the scaling field
    assert "Sm90ScalarBroadcast" in render.render(lookup(PROMOTE).config)[0].text


def _rendered_scale_layout(text):
    """(granularity M, N, K), (major of scale_a, major of scale_b) as the rendered kernel TU gives them."""
    gran = [int(re.search(rf"constexpr int ScaleGranularity{d} = (\d+);", text).group(1)) for d in "MNK"]
    majors = re.search(r"Sm90BlockwiseScaleConfig<\s*ScaleGranularityM, ScaleGranularityN, ScaleGranularityK, "
                       r"cute::GMMA::Major::(\w+), cute::GMMA::Major::(\w+)>", text).groups()
    return gran, majors


def _cutlass_offsets(major, rows, k_blocks, rows_per_scale):
    """The element offset CUTLASS's Sm1xxBlockwiseScaleConfig::tile_atom_to_shape_SFA/SFB give the scale of
    (row block r, k block kb) (cutlass/detail/blockwise_scale_layout.hpp): MN-major strides (1, row blocks),
    K-major (k blocks, 1). Returns a (rows, k_blocks) tensor of offsets."""
    row_blocks = -(-rows // rows_per_scale)
    r = torch.arange(rows)[:, None] // rows_per_scale
    kb = torch.arange(k_blocks)[None, :]
    return r + kb * row_blocks if major == "MN" else r * k_blocks + kb


def _blockwise_product(draw, p, majors, gran):
    """What the blockwise mainloop computes, in FP64: each k block's product of the FP8 values, times the scale
    of A at its row and the scale of B at its column block, as the rendered layouts address the flat buffers."""
    ops = draw.operands
    gm, gn, gk = gran
    kb = -(-p.k // gk)
    sa = ops.scale_a.double().flatten()[_cutlass_offsets(majors[0], p.m, kb, gm)]  # (m, kb)
    sb = ops.scale_b.double().flatten()[_cutlass_offsets(majors[1], p.n, kb, gn)]  # (n, kb)
    qa, qb = ops.a.double(), ops.b.double()
    out = torch.zeros(p.m, p.n, dtype=torch.float64)
    for b in range(kb):
        out += (qa[:, b * gk:(b + 1) * gk] @ qb[b * gk:(b + 1) * gk, :]) * sa[:, b:b + 1] * sb[:, b][None, :]
    return out


def test_the_rendered_scale_layouts_address_the_harness_scales():
    """The majors and granularity the kernel TU gives CUTLASS put scale_a[i, kb] (row-major m x ceil(k/128)) and
    scale_b[kb, j // 128] (row-major ceil(k/128) x ceil(n/128)) under every element, tails included."""
    gran, majors = _rendered_scale_layout(render.render(lookup(BLOCKWISE).config)[0].text)
    assert gran == [1, 128, 128] and majors == ("K", "MN")
    m, n, k = 200, 300, 520  # partial last blocks along m (no blocks), n and k
    kb, nb = -(-k // 128), -(-n // 128)
    assert torch.equal(_cutlass_offsets(majors[0], m, kb, gran[0]), torch.arange(m * kb).reshape(m, kb))
    assert torch.equal(_cutlass_offsets(majors[1], n, kb, gran[1]),
                       torch.arange(kb * nb).reshape(kb, nb).t().repeat_interleave(128, dim=0)[:n])
    assert not torch.equal(_cutlass_offsets("MN", m, kb, 1), _cutlass_offsets(majors[0], m, kb, 1))  # the test can fail


# the fixtures of tests/test_gpu_fp8_cutlass.py's blockwise run (fp8_accumulation is added to every FP8 contract,
# fp8_scales to every block-scaled one)
GPU_BLOCK_FIXTURES = ("uniform", "normal", "adversarial", "fp8_accumulation", "fp8_scales")


@pytest.mark.parametrize("fixture", GPU_BLOCK_FIXTURES)
def test_the_harness_passes_the_rendered_mapping_and_fails_a_wrong_one(fixture):
    """The GPU test can fail: the product computed with the rendered layouts PASSes the harness's judgement,
    each other choice of majors FAILs it on every fixture but uniform (whose block scales are all alike)."""
    from gemmcompare.contracts import correctness as corr
    from gemmcompare.runner.inputs import make_draw

    gran, majors = _rendered_scale_layout(render.render(lookup(BLOCKWISE).config)[0].text)
    contract = BUILTIN_CONTRACTS[BLOCK]
    p = GemmProblem(200, 300, 520)
    draw = make_draw(fixture, p, contract, 1, "cpu")

    def judged(choice):
        c = _blockwise_product(draw, p, choice, gran).to(torch.bfloat16)
        return corr.check_output(c, draw.refs, contract, corr.CorrectnessSettings(), p.k, fixture, 1)

    right = judged(majors)
    assert right.passed and right.worst_bound_ratio < 0.5, right.message
    wrong = [judged(choice) for choice in (("MN", "MN"), ("K", "K"), ("MN", "K"))]
    if fixture == "uniform":
        assert not wrong[0].passed  # scale_a M-major: rows of A take other rows' scales
    else:
        assert not any(w.passed for w in wrong), [w.worst_bound_ratio for w in wrong]


def test_padding_keeps_the_number_of_scale_blocks():
    """The harness pads n and k to the kernel's access widths and passes the padded extents; the scales keep
    the logical problem's shape, so the padded extents must cover the same 128-blocks."""
    config = lookup(BLOCKWISE).config
    _, pad_n, pad_k = config.pad_multiples()
    for v in range(1, 1000):
        for pad in (pad_n, pad_k):
            assert -(-(-(-v // pad) * pad) // 128) == -(-v // 128), (v, pad)


@pytest.mark.parametrize("fields, words", [
    ({"accumulation": "fast"}, "accumulation promote only"),
    ({"tile": [128, 128, 64]}, "needs tile K 128"),
    ({"tile": [128, 192, 128]}, "tile N a multiple of 128"),
    ({"stages": 4}, "stages auto"),
    ({"tile": [128, 256, 128]}, "two 128x256 accumulator tiles"),
    ({"schedule": "pingpong"}, "two 128x128 accumulator tiles"),
    ({"scaling": "rowcol"}, "scaling: expected one of ['tensor', 'block']"),
])
def test_invalid_blockwise_configurations_say_why(fields, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        Sm90Fp8Config.from_fields({"tile": [128, 128, 128], "schedule": "cooperative", "scaling": "block", **fields})


def test_a_blockwise_pingpong_tile_of_64_rows_validates():
    config = Sm90Fp8Config.from_fields({"tile": [64, 128, 128], "schedule": "pingpong", "scaling": "block"})
    assert "KernelTmaWarpSpecializedPingpongFP8BlockScaledAccum" in render.render(config)[0].text


def test_a_blockwise_entry_runs_block_contracts_strict_and_fastacc_and_nothing_else():
    impl = kernel(BLOCKWISE)
    awkward = GemmProblem(1000, 1000, 1000)
    for name in (BLOCK, BLOCK_FASTACC):
        for p in (P, awkward, GemmProblem(1, 8, 16)):
            assert impl.supports(p, BUILTIN_CONTRACTS[name]), (name, p)
    for name in (STRICT, FASTACC, "e4m3_bf16out_f32acc_tn_rowcol", "e4m3_bf16out_f32acc_tn_rowcol_fastacc"):
        s = impl.supports(P, BUILTIN_CONTRACTS[name])
        assert not s and "scaling" in s.reason and "(applies block scales" in s.reason, name
        assert "scaling tensor entries" in s.reason and "row/column scales: not built yet" in s.reason
    s = impl.supports(P, BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"])
    assert not s and "inputs bf16/bf16 not supported (takes e4m3)" in s.reason
    assert "scaling block, FP32-promoted accumulation" in impl.contracts_summary()
    assert "block scales (1x128 of A, 128x128 of B)" in impl.description


def test_the_planner_runs_the_blockwise_entries_under_block_contracts_only():
    contracts = [STRICT, FASTACC, "e4m3_bf16out_f32acc_tn_rowcol", BLOCK, BLOCK_FASTACC, "e4m3_f32out_f32acc_tn_block",
                 "bf16_bf16out_f32acc_tn"]
    exp = _spec(contracts, f"cutlass: {{config: {BLOCKWISE}}}", f"cutlass: {{config: {PROMOTE}}}")
    cells = _cells(exp)
    runs = {(c, i) for (c, i), s in cells.items() if s}
    blockwise = {(c, i) for c, i in runs if "_blockwise_" in i}
    assert {c for c, _ in blockwise} == {BLOCK, BLOCK_FASTACC, "e4m3_f32out_f32acc_tn_block"}
    assert any("e4m3_f32_f32" in i for c, i in blockwise if c == "e4m3_f32out_f32acc_tn_block")  # out from the contract
    assert {c for c, i in runs if "_blockwise_" not in i} == {STRICT, FASTACC}  # per-tensor: tensor contracts only
    reasons = {(c, i): s.reason for (c, i), s in cells.items() if not s}
    assert any(c == STRICT and "_blockwise_" in i and "scaling tensor not supported" in r for (c, i), r in reasons.items())
    assert any(c == BLOCK and "_blockwise_" not in i and "scaling block not supported" in r for (c, i), r in reasons.items())


def test_config_auto_races_the_blockwise_entries_under_block_contracts():
    exp = _spec([BLOCK, BLOCK_FASTACC, STRICT], "cutlass: {config: auto, template: sm90_fp8}")
    seen = {}
    for tuned in exp.implementations:
        for contract in exp.contracts:
            if tuned.derived_for is not None and contract.name not in tuned.derived_for:
                continue
            seen[contract.name] = {c.catalog_name for c in tuned.candidates if c.supports(P, contract)}
    assert seen[BLOCK] == seen[BLOCK_FASTACC] == set(blockwise_entries())
    assert seen[STRICT] and not seen[STRICT] & set(blockwise_entries())


def test_an_abi_kernel_gets_the_contracts_own_block_scales():
    contract = BUILTIN_CONTRACTS[BLOCK]
    p = GemmProblem(200, 300, 520)
    g = torch.Generator().manual_seed(0)
    a, sa = quantize(torch.randn(p.m, p.k, generator=g), DType.E4M3, Scaling.BLOCK, "a")
    b, sb = quantize(torch.randn(p.k, p.n, generator=g), DType.E4M3, Scaling.BLOCK, "b")
    assert sa.shape == (200, 5) and sb.shape == (5, 3)
    ops = Operands(a, b, storage=contract.storage, scale_a=sa, scale_b=sb)
    ext = _Extension()
    AbiPrepared(kernel(BLOCKWISE), p, contract, ops, ext).launch()
    (call,) = ext.log
    assert call["scale_a"] is sa and call["scale_b"] is sb  # read in place by the mainloop: no copy
    assert call["codes"][9] == Scaling.BLOCK.abi_code == 3
