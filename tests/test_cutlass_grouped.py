"""CUTLASS SM90 grouped GEMMs (kernel templates sm90_grouped and sm90_grouped_fp8) on the CPU: the catalog, what renders, validation,
the grouped-only contract of CutlassGroupedKernel, `config: auto`, and the ABI's grouped form in gemm_abi.h.

The nvcc compile tests are in tests/test_cutlass_grouped_compile.py; the golden files of one grouped entry are
tests/test_cutlass_render.py's (GOLDEN).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import torch

from gemmcompare.cli import main as cli_main
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.cutlass import render, tags
from gemmcompare.cutlass.catalog import catalog, lookup
from gemmcompare.cutlass.config import ConfigError, Sm90GroupedConfig, Sm90GroupedFp8Config
from gemmcompare.implementations import PARAMETRIZED, instantiate
from gemmcompare.implementations.base import Ok, Skip
from gemmcompare.implementations.cutlass import CutlassGroupedKernel, CutlassKernel
from gemmcompare.implementations.registry import UnbuildableImplementation
from gemmcompare.paths import ABI_INCLUDE_DIR
from gemmcompare.problems import GemmProblem
from gemmcompare.spec import parse_spec
from gemmcompare.tuning.tuned import TunedImplementation

BF16 = BUILTIN_CONTRACTS["bf16_bf16out_f32acc_tn"]
F16 = BUILTIN_CONTRACTS["f16_f32acc_tn"]
FP8_BLOCK = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block"]
FP8_TENSOR = BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_tensor"]


def grouped_entries(template: str = "sm90_grouped") -> dict:
    return {n: e for n, e in catalog().items() if e.config.TEMPLATE == template}


def problem(group_m=(0, 5, 128, 300), n=4096, k=7168, layout="contiguous", **over):
    """A grouped problem as CutlassGroupedKernel reads it (GroupedProblem's fields; a namespace, so that shapes
    GroupedProblem itself refuses, such as a negative M, reach the kernel's own checks too)."""
    fields = {"is_grouped": True, "groups": len(group_m), "ms": tuple(group_m), "n": n, "k": k, "layout": layout}
    fields.update({("ms" if key == "group_m" else key): value for key, value in over.items()})
    return SimpleNamespace(**fields)


def kernel(name: str) -> CutlassGroupedKernel:
    impl = instantiate(PARAMETRIZED["cutlass"], {"config": name})
    assert isinstance(impl, CutlassGroupedKernel), impl
    return impl


# -- the catalog and what it renders -------------------------------------------------------------------------

def test_catalog_has_cooperative_and_pingpong_tiles_with_both_clusters():
    entries = grouped_entries()
    shapes = {(e.config.schedule, e.config.tile, e.config.cluster) for e in entries.values()}
    assert {("cooperative", (128, 128, 64), (1, 1)), ("cooperative", (128, 256, 64), (1, 1)),
            ("pingpong", (64, 128, 64), (1, 1)), ("cooperative", (128, 128, 64), (2, 1)),
            ("pingpong", (64, 128, 64), (2, 1)), ("cooperative", (256, 128, 64), (1, 1)),
            ("pingpong", (64, 256, 64), (1, 1))} <= shapes
    swizzles = {}
    for e in entries.values():
        c = e.config
        assert (c.dtype, c.out, c.acc, c.layout) == ("bf16", "bf16", "f32", "tn")
        assert c.GROUPED and c.procedural_name.startswith("cutlass3x_sm90_grouped_bf16_bf16_f32_")
        assert c.raster == "along_m" and c.procedural_name.endswith(f"_rasterM_swz{c.swizzle}")  # CUTLASS's default
        swizzles.setdefault(c.kernel_name, set()).add(c.swizzle)
    # a swizzle is a run-time argument: its entry shares the build of the entry without it
    assert swizzles["cutlass3x_sm90_grouped_bf16_bf16_f32_128x256x64_1x1x1_coop_stauto_tn_align8"] == {1, 8}


@pytest.mark.parametrize("name", sorted(grouped_entries()))
def test_every_grouped_entry_renders_the_pointer_array_kernel(name):
    config = lookup(name).config
    kernel_tu, entry_tu = render.render(config)
    schedule = tags.SM90_GROUPED_SCHEDULES[config.schedule]
    text = kernel_tu.text
    assert f"using KernelSchedule = {schedule.kernel};" in text
    assert f"using EpilogueSchedule = {schedule.tma_epilogue};" in text
    assert "cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>" in text
    assert "GemmUniversalMode::kGrouped" in text
    # the pointer-array collectives: one pointer and stride per group, for A, B and D (no C source)
    assert "ElementA, LayoutA*, AlignmentA" in text and "ElementB, LayoutB*, AlignmentB" in text
    assert "void, LayoutD*, AlignmentD" in text
    assert "using ElementA = cutlass::bfloat16_t;" in text and "using ElementD = cutlass::bfloat16_t;" in text
    m, n, k = config.tile
    assert f"cute::Shape<cute::_{m}, cute::_{n}, cute::_{k}>" in text
    assert f"cute::Shape<cute::_{config.cluster[0]}, cute::_{config.cluster[1]}, cute::_1>" in text
    # the per-group arrays are built on the device from the offsets, in the workspace, on the harness's stream
    assert "__global__ void gc_grouped_arguments_kernel" in text and "args->stream>>>" in text
    assert "group_arrays_bytes(args->groups) +" in text
    assert f"static_assert(GemmKernel::SharedStorageSize <= {tags.SMEM_CAPACITY[90]}," in text
    assert "${" not in text and "${" not in entry_tu.text
    assert f"constexpr int kRasterOrder = {tags.SM90_RASTER[config.raster][0]};" in entry_tu.text


def test_raster_and_swizzle_share_the_kernel_tu():
    base = lookup("sm90_grouped_coop_128x128x64_c1x1").config
    variant = base.replace(raster="along_n", swizzle=4)
    assert variant.kernel_name == base.kernel_name and variant.procedural_name.endswith("_rasterN_swz4")
    (k0, e0), (k1, e1) = render.render(base), render.render(variant)
    assert k0 == k1 and e0.filename != e1.filename and "kMaxSwizzle = 4;" in e1.text


def test_the_kernel_checks_the_abi_grouped_form_before_it_launches():
    text = render.render(lookup("sm90_grouped_pp_64x128x64_c1x1").config)[0].text
    for refusal in ("called without groups (gc_gemm_args.groups = 0)", "contiguous group layout only",
                    "group_m_host does not sum to m", "group_offsets is null",
                    "TMA needs 16-byte aligned operands, leading dimensions and ",
                    "workspace smaller than the per-group arrays"):
        assert refusal in text, refusal
    # all groups empty: nothing launched (CUTLASS would size a grid of zero CTAs from the host shapes)
    assert "if (args->m == 0) return 0;" in text
    # the occupancy query describes the launch, not a problem: it checks the contract only
    occupancy = text[text.index("_occupancy(const gc_gemm_args* args"):]
    assert "check_contract(args, err, err_len)" in occupancy and "check_args(" not in occupancy


# -- validation -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields, message", [
    ({"layout": "nt"}, "layout tn, not nt"),
    ({"schedule": "tma_ws"}, "cooperative or pingpong"),
    ({"dtype": "tf32", "out": "f32"}, "dtype tf32 is not available in kernel template sm90_grouped"),
    ({"dtype": "e4m3"}, "dtype e4m3 is not available in kernel template sm90_grouped"),
    ({"epilogue": "nosmem"}, "epilogue: not a field of kernel template sm90_grouped"),
    ({"scheduler": "stream_k"}, "scheduler: not a field of kernel template sm90_grouped"),
    ({"swap_ab": True}, "swap_ab: not a field of kernel template sm90_grouped"),
    ({"tile": [64, 128, 64], "schedule": "cooperative"}, "tile M 64 must be a multiple of 128"),
    ({"tile": [128, 256, 64], "schedule": "pingpong"}, "256 registers per thread"),
    ({"tile": [128, 256, 128], "stages": 4}, "shared memory"),
    ({"raster": "heuristic"}, "raster: expected one of ['along_m', 'along_n']"),  # CUTLASS has none for groups
])
def test_invalid_grouped_configurations_are_rejected_with_the_reason(fields, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Sm90GroupedConfig.from_fields({"dtype": "bf16", "out": "bf16", **fields})


def test_auto_stages_leave_room_for_the_per_group_descriptors():
    """The builder subtracts its pointer-array carve-out (2 TMA descriptors, the scheduler pipeline) before it
    counts stages; the 9 stages of the 64x128x64 ping-pong tile still fit with the epilogue's descriptors."""
    pp = lookup("sm90_grouped_pp_64x128x64_c1x1").config
    assert pp.resolved_stages() == 9 and pp.smem_bytes() <= tags.SMEM_CAPACITY[90]
    assert lookup("sm90_grouped_coop_128x256x64_c1x1").config.resolved_stages() == 4
    dense = lookup("sm90_coop_128x256x64_c1x1").config.replace(dtype="bf16", out="bf16")
    grouped = lookup("sm90_grouped_coop_128x256x64_c1x1").config
    assert grouped.resolved_stages() == dense.resolved_stages()
    assert grouped.smem_bytes() == dense.smem_bytes() + grouped.KERNEL_CARVEOUT + grouped.EPILOGUE_TENSORMAPS


# -- the implementation: grouped problems only ----------------------------------------------------------------

def test_a_grouped_entry_runs_grouped_contiguous_problems_only():
    impl = kernel("sm90_grouped_coop_128x128x64_c1x1")
    assert impl.supports(problem(), BF16) == Ok()
    assert impl.supports(problem(group_m=(0, 0, 0)), BF16) == Ok()  # every group empty: legal, nothing to do
    assert impl.supports(GemmProblem(256, 4096, 7168), BF16) == Skip("grouped problems only")
    assert impl.supports(problem(is_grouped=False), BF16) == Skip("grouped problems only")
    assert impl.supports(problem(layout="masked"), BF16) == Skip("contiguous layout only")


@pytest.mark.parametrize("over, reason", [
    ({"k": 7164}, "k=7164 is not a multiple of 8 (TMA moves 16-byte rows; grouped problems are not padded)"),
    ({"n": 4100}, "n=4100 is not a multiple of 8"),
    ({"group_m": (1, -1)}, "a group's M is negative"),
    ({"group_m": (1, 2), "groups": 3}, "3 groups with 2 row counts"),
    ({"group_m": (), "groups": 0}, "0 groups with 0 row counts"),
    ({"group_m": (2**31, 1)}, "a group's M=2,147,483,648 does not fit the kernel's int group problem shape"),
    ({"group_m": (2**30, 2**30)}, "the sum of the groups' M=2,147,483,648 does not fit"),
])
def test_grouped_problems_the_kernel_cannot_take_are_skips_with_the_reason(over, reason):
    got = kernel("sm90_grouped_pp_64x128x64_c1x1").supports(problem(**over), BF16)
    assert isinstance(got, Skip) and reason in got.reason, got


def test_the_contract_still_decides():
    impl = kernel("sm90_grouped_coop_128x128x64_c1x1")
    assert impl.supports(problem(), F16) == Skip("inputs f16/f16 not supported (takes bf16)")
    assert not impl.supports(problem(), FP8_BLOCK)


def test_dense_configurations_skip_grouped_problems():
    dense = instantiate(PARAMETRIZED["cutlass"], {"config": "sm90_coop_128x256x64_c1x1", "dtype": "bf16", "out": "bf16"})
    assert type(dense) is CutlassKernel
    got = dense.supports(problem(), BF16)
    assert isinstance(got, Skip) and "grouped problems run on the sm90_grouped configurations" in got.reason
    assert dense.supports(GemmProblem(256, 4096, 7168), BF16) == Ok()


def test_a_grouped_kernel_is_built_for_sm_90a_with_a_workspace():
    impl = kernel("sm90_grouped_pp_64x128x64_c2x1")
    req = impl.build_request(impl.target_arch(90))
    assert req.arch == "sm_90a" and req.has_workspace and req.uses_cutlass
    assert [s.filename for s in req.sources] == [render.kernel_filename(impl.config), render.entry_filename(impl.config)]
    assert re.search(impl.kernel_filter, "_ZN45_GLOBAL__N__gc_grouped_arguments_kernelE")
    assert "grouped" in impl.description and impl.catalog_name == "sm90_grouped_pp_64x128x64_c2x1"


class FakeGroupedEntry:
    """What the binding is handed (entry.launch / entry.workspace_bytes), logged; launch computes each group's
    C_g = A_g @ B_g^T from the offsets and stride_b it is given, as the ABI describes the contiguous layout."""

    def __init__(self, log):
        self.log = log

    def workspace_bytes(self, a, b, c, dims, codes, alpha, beta, ws, bias, sa, sb, *grouped):
        self.log.append(("workspace_bytes", list(dims), *[t.tolist() for t in grouped]))
        return 256

    def launch(self, a, b, c, dims, codes, alpha, beta, ws, bias, sa, sb, *grouped):
        offsets, m_host = grouped
        self.log.append(("launch", list(dims), offsets.tolist(), m_host.tolist(), ws.numel()))
        m, n, k, lda, ldb, ldc, _, _, stride_b, _, groups = dims
        for g in range(groups):
            lo, hi = int(offsets[g]), int(offsets[g + 1])
            la = a.as_strided((hi - lo, k), (lda, 1), a.storage_offset() + lo * lda)
            lb = b.as_strided((n, k), (ldb, 1), b.storage_offset() + g * stride_b)
            c.as_strided((hi - lo, n), (ldc, 1), c.storage_offset() + lo * ldc).copy_(la.float() @ lb.float().t())


class FakeGroupedExtension:
    def __init__(self):
        self.log = []

    def entry(self, symbol):
        return FakeGroupedEntry(self.log)


def test_prepare_hands_the_grouped_form_to_the_binding_with_a_workspace_sized_for_it():
    from gemmcompare.contracts import correctness as corr
    from gemmcompare.grouped import GroupedProblem
    from gemmcompare.runner.inputs import make_draw

    p = GroupedProblem(16, 24, (0, 5, 0, 3))  # empty groups first, between and not last
    impl, ext = kernel("sm90_grouped_coop_128x128x64_c1x1"), FakeGroupedExtension()
    assert impl.check(p, BF16, None)
    draw = make_draw("uniform", p, BF16, 7, "cpu")
    prepared = impl.prepare(p, BF16, draw.operands, ext)
    dims = [8, 16, 24, 24, 24, 16, 1, 0, 16 * 24, 0, 4]
    assert ext.log == [("workspace_bytes", dims, [0, 0, 5, 5, 8], [0, 5, 0, 3])]
    prepared.poison()
    prepared.launch()
    assert ext.log[-1] == ("launch", dims, [0, 0, 5, 5, 8], [0, 5, 0, 3], 256)
    assert prepared.group_offsets.dtype == prepared.group_m_host.dtype == torch.int64
    out = corr.check_output(prepared.output(), draw.refs, BF16, corr.CorrectnessSettings(), p.k, "uniform", 7)
    assert out.passed, out


def test_invalid_grouped_spec_points_become_skip_rows():
    impl = instantiate(PARAMETRIZED["cutlass"], {"template": "sm90_grouped", "layout": "nn"})
    assert isinstance(impl, UnbuildableImplementation)
    assert "layout tn, not nn" in impl.supports(problem(), BF16).reason


# -- FP8 with block scales (sm90_grouped_fp8) ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(grouped_entries("sm90_grouped_fp8")))
def test_every_fp8_grouped_entry_renders_the_blockwise_pointer_array_kernel(name):
    config = lookup(name).config
    kernel_tu, entry_tu = render.render(config)
    text = kernel_tu.text
    assert f"using KernelSchedule = {tags.SM90_GROUPED_FP8_BLOCK_SCALED[config.schedule]};" in text
    assert "ElementA, cute::tuple<LayoutA*, LayoutSFA*>, AlignmentA" in text
    assert "ElementB, cute::tuple<LayoutB*, LayoutSFB*>, AlignmentB" in text
    assert "using ElementA = cutlass::float_e4m3_t;" in text and "args->scaling != GC_SCALING_BLOCK" in text
    # each group's scales: its rows of the stacked scale_a, its block of scale_b, and their layouts per group M
    assert "arrays.ptr_sfa[g] = scale_a + row * k_blocks;" in text
    assert "arrays.ptr_sfb[g] = scale_b + static_cast<int64_t>(g) * k_blocks * n_blocks;" in text
    assert "ScaleConfig::tile_atom_to_shape_SFA(cute::make_shape(m_g, n, k, 1))" in text
    assert "arrays.ptr_sfa, arrays.layout_sfa, arrays.ptr_sfb, arrays.layout_sfb" in text
    assert "${" not in text and render.entry_filename(config) == entry_tu.filename
    assert config.procedural_name.startswith("cutlass3x_sm90_grouped_fp8_blockwise_e4m3_bf16_f32_")


@pytest.mark.parametrize("fields, message", [
    ({"tile": [128, 128, 64]}, "tile K 64 for e4m3 must be one of 128"),
    ({"tile": [128, 192, 128]}, "tile N a multiple of 128"),
    ({"stages": 4}, "stages auto"),
    ({"tile": [128, 128, 128], "schedule": "pingpong"}, "two 128x128 accumulator tiles"),
    ({"dtype": "bf16"}, "dtype bf16 is not available in kernel template sm90_grouped_fp8"),
])
def test_invalid_fp8_grouped_configurations_are_rejected_with_the_reason(fields, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Sm90GroupedFp8Config.from_fields(fields)


def test_an_fp8_grouped_entry_runs_block_scaled_fp8_contracts_only():
    impl = kernel("sm90_grouped_fp8_blockwise_coop_128x128x128_c1x1")
    assert impl.supports(problem(), FP8_BLOCK) == Ok()
    assert impl.supports(problem(), BUILTIN_CONTRACTS["e4m3_bf16out_f32acc_tn_block_fastacc"]) == Ok()  # it promotes
    assert "scaling tensor not supported" in impl.supports(problem(), FP8_TENSOR).reason
    assert impl.supports(problem(), BF16) == Skip("inputs bf16/bf16 not supported (takes e4m3)")
    assert impl.supports(GemmProblem(128, 4096, 7168), FP8_BLOCK) == Skip("grouped problems only")
    assert "k=7000 is not a multiple of 16" in impl.supports(problem(k=7000), FP8_BLOCK).reason


# -- tuning per problem ---------------------------------------------------------------------------------------

SPEC = """
name: grouped
problems: [{m: 64, n: 4096, k: 4096}]
contracts: [bf16_bf16out_f32acc_tn]
implementations:
  - {ENTRY}
"""


def test_config_auto_with_the_template_races_the_grouped_entries():
    exp = parse_spec(SPEC.replace("{ENTRY}", "cutlass: {config: auto, template: sm90_grouped}"), "grouped.yaml")
    (tuned,) = exp.implementations
    assert isinstance(tuned, TunedImplementation) and "template=sm90_grouped" in tuned.name
    assert {c.catalog_name for c in tuned.candidates} == set(grouped_entries())
    assert all(isinstance(c, CutlassGroupedKernel) for c in tuned.candidates)
    assert all(c.supports(problem(), BF16) == Ok() for c in tuned.candidates)
    assert tuned.supports(problem(), BF16)


def test_config_auto_with_the_fp8_template_races_the_fp8_grouped_entries_under_a_block_contract():
    spec = SPEC.replace("{ENTRY}", "cutlass: {config: auto, template: sm90_grouped_fp8}").replace(
        "bf16_bf16out_f32acc_tn", "e4m3_bf16out_f32acc_tn_block")
    (tuned,) = parse_spec(spec, "grouped.yaml").implementations
    assert {c.catalog_name for c in tuned.candidates} == set(grouped_entries("sm90_grouped_fp8"))
    assert all(c.supports(problem(), FP8_BLOCK) == Ok() for c in tuned.candidates)
    assert tuned.supports(problem(), FP8_BLOCK)


GROUPED_SPEC = """
name: grouped
problems:
  - grouped: {n: 256, k: 512, m: [64, 0, 5]}
contracts: [CONTRACT]
implementations:
  - ENTRY
"""


@pytest.mark.parametrize("entry, contract", [
    ("cutlass: {config: auto, template: sm90_grouped}", "bf16_bf16out_f32acc_tn"),
    ("cutlass: {config: auto, template: sm90_grouped_fp8}", "e4m3_bf16out_f32acc_tn_block"),
    ("cutlass: {config: sm90_grouped_fp8_blockwise_coop_128x128x128_c1x1}", "e4m3_bf16out_f32acc_tn_block"),
])
def test_a_grouped_spec_plans_the_grouped_entries_tuned_or_not(entry, contract):
    """A tuned row admits grouped problems when its candidates do (it used to SKIP them all: Implementation.admits
    asked the tuned row's own takes_grouped), and the FP8 grouped entries are the grouped FP8 path, so a grouped
    spec with an FP8 block contract may name them (it used to be a spec error)."""
    exp = parse_spec(GROUPED_SPEC.replace("ENTRY", entry).replace("CONTRACT", contract), "grouped.yaml")
    (impl,) = exp.implementations
    assert impl.takes_grouped and impl.admits(exp.problems[0].problem, BUILTIN_CONTRACTS[contract])
    assert impl.grouped_fp8 == ("fp8" in entry)


def test_config_auto_without_a_template_leaves_the_grouped_entries_out():
    grouped = set(grouped_entries()) | set(grouped_entries("sm90_grouped_fp8"))
    for contract in ("bf16_bf16out_f32acc_tn", "e4m3_bf16out_f32acc_tn_block"):
        exp = parse_spec(SPEC.replace("{ENTRY}", "cutlass: {config: auto}").replace("bf16_bf16out_f32acc_tn", contract),
                         "grouped.yaml")
        names = {c.catalog_name for t in exp.implementations for c in t.candidates}
        assert names and not names & grouped, contract


def test_cutlass_list_shows_the_grouped_catalog(capsys):
    assert cli_main(["cutlass", "list", "--template", "sm90_grouped"]) == 0
    out = capsys.readouterr().out
    assert f"{len(grouped_entries())} configuration(s)" in out
    assert "sm90_grouped_pp_64x128x64_c1x1" in out and "cutlass3x_sm90_grouped_bf16_bf16_f32_64x128x64_1x1x1_pp" in out


# -- the ABI's grouped form -----------------------------------------------------------------------------------

def test_the_abi_gains_the_grouped_form_at_the_end_of_its_arguments():
    """Additive: ABI 4's fields come after ABI 3's last one, so an entry compiled for ABI 3 reads what it knew
    where it was; a zero-initialized gc_gemm_args (the binding's, the occupancy probe's) is not grouped."""
    header = (ABI_INCLUDE_DIR / "gemmcompare" / "gemm_abi.h").read_text()
    assert re.search(r"#define GC_ABI_VERSION 4\b", header)
    body = header[header.index("typedef struct gc_gemm_args {"):header.index("} gc_gemm_args;")]
    fields = re.findall(r"^\s+([\w*, ]+?)\s*;", body, re.M)
    assert fields[-5:] == ["int64_t stride_a, stride_b, stride_c", "int64_t groups", "const int64_t* group_offsets",
                           "const int64_t* group_m_host", "gc_group_layout group_layout"]
    assert "GC_GROUPS_CONTIGUOUS = 0" in header
    assert "static inline bool gc_is_grouped(const gc_gemm_args* args) { return args->groups > 0; }" in header
    for said in ("DEVICE pointer, groups + 1 int64 cumulative row offsets", "HOST pointer, groups int64",
                 "builds them on the device from group_offsets", "scale_b + g * kb * nb"):
        assert said in header, said
