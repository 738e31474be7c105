"""Kernel template cute_sm90 (our CuTe Hopper kernel) on the CPU: the YAML -> configuration rules, what a spec entry
becomes, and what the rendered kernel says it is. Its golden files are test_cutlass_render.py's; its nvcc compile
is test_cutlass_compile.py's cute_sm90 case."""

from __future__ import annotations

import re

import pytest

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.cutlass import render, tags
from gemmcompare.cutlass.catalog import catalog, load_file, lookup
from gemmcompare.cutlass.config import ConfigError, CuteSm90Config
from gemmcompare.implementations import PARAMETRIZED as REGISTERED, instantiate
from gemmcompare.implementations.base import Ok, Skip
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.implementations.registry import UnbuildableImplementation
from gemmcompare.model.kernels import kernel_from_row
from gemmcompare.problems import GemmProblem
from gemmcompare.report.labels import legend_labels
from gemmcompare.plan import make_plan
from gemmcompare.spec import parse_spec

F16 = BUILTIN_CONTRACTS["f16_f32acc_tn"]
STUDY_ROW = "cute_sm90_ws_128x256x64_c2_4st"


INVALID = [
    ({"tile": [192, 256, 64], "consumers": 2}, "tile M 192 must be a multiple of 128"),
    ({"tile": [32, 128, 64], "consumers": 1}, "tile M 32 must be a multiple of 64"),
    ({"tile": [512, 128, 64]}, "up to 256"),
    ({"tile": [128, 160, 64]}, "tile N 160 is not a wgmma N"),
    ({"tile": [128, 8, 64]}, "tile N 8 is not a wgmma N"),
    ({"tile": [128, 128, 32]}, "tile K 32 must be 64 or 128"),
    ({"tile": [128, 256, 64], "consumers": 1}, "256 accumulator registers per thread"),
    ({"tile": [256, 256, 64], "consumers": 2}, "256 accumulator registers per thread"),
    ({"tile": [128, 256, 64], "stages": 5}, "need 247,808 bytes of shared memory; sm_90 allows 232,448"),
    ({"tile": [128, 256, 128], "stages": 3}, "shared memory"),
    ({"stages": "auto"}, "fixed stage count"),
    ({"layout": "nt"}, "K-major operands only"),
    ({"dtype": "tf32"}, "not available in kernel template cute_sm90"),
    ({"dtype": "bf16", "out": "f16"}, "writes bf16 or f32"),
    ({"dtype": "bf16", "acc": "f16"}, "acc f16 needs dtype f16 and out f16"),
    ({"schedule": "cooperative"}, "schedule: expected one of ['pipelined', 'warp_specialized']"),
    ({"consumers": 3}, "consumers: expected one of [1, 2]"),
    ({"warps": [2, 2]}, "not a field of kernel template cute_sm90"),
]


@pytest.mark.parametrize("fields, message", INVALID)
def test_bad_configurations_are_refused_with_the_reason(fields, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        CuteSm90Config.from_fields(fields)


def test_the_largest_tiles_that_fit_are_accepted():
    # 4 stages of 128x256x64 f16: 196,608 bytes of tiles + 2,048 of barriers and alignment slack
    assert CuteSm90Config.from_fields({"tile": [128, 256, 64], "stages": 4}).smem_bytes() == 198_656
    assert CuteSm90Config.from_fields({"tile": [128, 128, 64], "stages": 7}).smem_bytes() == 231_424
    assert CuteSm90Config.from_fields({"tile": [256, 128, 64], "consumers": 2, "stages": 4}).threads == 384
    assert CuteSm90Config.from_fields({"tile": [64, 256, 64], "consumers": 1, "schedule": "pipelined"}).threads == 128
    # f16 accumulators take half the registers: one warpgroup may hold a 64 x 256 f16 tile twice over
    assert CuteSm90Config.from_fields({"tile": [128, 256, 64], "consumers": 1, "acc": "f16", "out": "f16"})


def test_catalog_entries_are_the_configurations_their_names_say():
    entries = {n: e.config for n, e in catalog().items() if e.config.TEMPLATE == "cute_sm90"}
    assert STUDY_ROW in entries and len(entries) >= 4
    for name, c in entries.items():
        sched = tags.CUTE_SM90_SCHEDULES[c.schedule].short
        assert name == f"cute_sm90_{sched}_{c.tile[0]}x{c.tile[1]}x{c.tile[2]}_c{c.consumers}_{c.stages}st", name
        assert c.smem_bytes() <= tags.SMEM_CAPACITY[90]
    study = entries[STUDY_ROW]
    assert (study.tile, study.schedule, study.consumers, study.stages) == ((128, 256, 64), "warp_specialized", 2, 4)


def test_a_bad_catalog_entry_names_file_line_and_reason(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("template: cute_sm90\nconfigs:\n  good: {tile: [128, 128, 64]}\n"
                    "  too_deep:\n    tile: [128, 256, 64]\n    stages: 6\n")
    entries, problems = load_file(path)
    assert [e.name for e in entries] == ["good"]
    assert len(problems) == 1 and "c.yaml:4: configs.too_deep: 6 stages of 128x256x64 f16 tiles" in problems[0]


def test_a_spec_entry_names_the_row_and_its_types_come_from_the_contract():
    impl = instantiate(REGISTERED["cutlass"], {"config": STUDY_ROW})
    assert isinstance(impl, CutlassKernel)
    assert impl.name == "cutlass.cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn_swz8"
    assert (impl.min_cc, impl.arch_specific, impl.target_arch(90)) == (90, True, "sm_90a")
    assert impl.kernel_filter == "cute_sm90_gemm_kernel" and impl.dynamic_smem_bytes() == 198_656
    bf16 = instantiate(REGISTERED["cutlass"], {"config": STUDY_ROW, "dtype": "bf16", "out": "bf16"})
    assert bf16.config.mma_atom.startswith("cute::SM90_64x256x16_F32BF16BF16_SS<")
    exp = parse_spec(f"""\
name: t
problems: [{{m: 256, n: 256, k: 256}}]
contracts: [f16_f32acc_tn, bf16_bf16out_f32acc_tn]
implementations: [library.cublas, cutlass: {{config: {STUDY_ROW}}}]
""", "t.yaml")
    rows = {next(iter(i.derived_for)): i.name for i in exp.implementations if i.family == "cutlass"}
    assert rows == {"f16_f32acc_tn": "cutlass.cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn_swz8",
                    "bf16_bf16out_f32acc_tn": "cutlass.cute_sm90_bf16_bf16_f32_128x256x64_ws_c2_4st_tn_swz8"}
    assert not [c for c in make_plan(exp).cells if isinstance(c.support, Skip)]


@pytest.mark.parametrize("params, reason", [
    ({"config": STUDY_ROW, "stages": 6}, "sm_90 allows 232,448"),
    ({"config": STUDY_ROW, "tile": [128, 200, 64]}, "tile N 200 is not a wgmma N"),
    ({"template": "cute_sm90", "tile": [128, 256, 64], "consumers": 1}, "it would spill"),
])
def test_bad_spec_points_are_skip_rows_before_anything_compiles(params, reason):
    impl = instantiate(REGISTERED["cutlass"], params)
    assert isinstance(impl, UnbuildableImplementation)
    s = impl.supports(GemmProblem(4096, 4096, 4096), F16)
    assert isinstance(s, Skip) and reason in s.reason


def test_any_shape_runs_unpadded_with_16_byte_rows():
    impl = instantiate(REGISTERED["cutlass"], {"config": STUDY_ROW})
    odd = GemmProblem(257, 263, 251)
    assert isinstance(impl.supports(odd, F16), Ok)
    assert impl.constraints.pad_to is None and impl.constraints.padded(odd) == odd  # TMA zero-fills, no padding
    assert impl.constraints.ld_multiples == (8, 8, 1)  # 16-byte rows of A and B (the storage policy meets it)
    for contract, reason in [("f16_f32acc_nt", "layout nt"), ("f32_tf32_tn", "inputs f32")]:
        s = impl.supports(odd, BUILTIN_CONTRACTS[contract])
        assert isinstance(s, Skip) and reason in s.reason


def test_the_rendered_kernel_uses_the_sm90_atoms_it_is_named_for():
    for name, warp_specialized in ((STUDY_ROW, True), ("cute_sm90_pipe_128x128x64_c1_4st", False)):
        config = lookup(name).config
        kernel, entry = render.render(config)
        text = kernel.text
        for needle in ("SM90_TMA_LOAD", "GMMA::Layout_K_SW128_Atom", "cutlass::PipelineTmaAsync<kStages>",
                       "warpgroup_arrive()", "warpgroup_commit_batch()", "warpgroup_wait<1>()",
                       f"cute::SM90_64x{config.tile[1]}x16_F32F16F16_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>"):
            assert needle in text, (name, needle)
        assert f"constexpr bool kWarpSpecialized = {'true' if warp_specialized else 'false'};" in text
        assert f"constexpr int kStages = {config.stages};" in text
        assert "lda and ldb multiples of" in text  # the TMA alignment refusal, before any descriptor
        assert "kGroupM = 8;" in entry.text


def test_the_model_knows_its_block_and_persistence():
    def shape(name):
        impl = instantiate(REGISTERED["cutlass"], {"config": name})
        return kernel_from_row({"family": "cutlass", "implementation": impl.name, "params": impl.params,
                                "contract": "f16_f32acc_tn"})

    ws, pipe = shape(STUDY_ROW), shape("cute_sm90_pipe_128x128x64_c1_4st")
    assert (ws.threads_per_block, ws.persistent, ws.instruction, ws.block_tile) == (384, True, "wgmma", (128, 256, 64))
    assert (pipe.threads_per_block, pipe.persistent, pipe.raster_group) == (128, False, 8)


def test_report_labels_keep_tile_schedule_and_stages():
    names = ["cutlass.cute_sm90_f16_f32_f32_128x256x64_ws_c2_4st_tn_swz8",
             "cutlass.cute_sm90_f16_f32_f32_128x128x64_pipe_c1_4st_tn_swz8"]
    assert legend_labels(names) == {names[0]: "cute_sm90 128x256x64 ws c2 4st",
                                    names[1]: "cute_sm90 128x128x64 pipelined c1 4st"}
