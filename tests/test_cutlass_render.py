"""CUTLASS/CuTe configurations on the CPU: validation, rendering (golden files), catalog, registry, enumerate.

Regenerate the golden files after an intended template change with
    GEMMCOMPARE_UPDATE_GOLDEN=1 python -m pytest tests/test_cutlass_render.py
and review the diff of tests/golden/cutlass/ like code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.cutlass import render, tags
from gemmcompare.paths import CUTLASS_TEMPLATES_DIR
from gemmcompare.cutlass.catalog import CatalogError, catalog, load_catalog, load_file, lookup
from gemmcompare.cli import main as cli_main
from gemmcompare.cutlass.config import ConfigError, CuteSm80Config, Sm80Config, Sm90Config
from gemmcompare.cutlass.kernel_templates import TEMPLATES
from gemmcompare.implementations import PARAMETRIZED as REGISTERED, instantiate
from gemmcompare.implementations.base import Ok, Skip
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.implementations.registry import UnbuildableImplementation
from gemmcompare.problems import GemmProblem

GOLDEN_DIR = Path(__file__).parent / "golden" / "cutlass"
UPDATE_GOLDEN = os.environ.get("GEMMCOMPARE_UPDATE_GOLDEN") == "1"

# Representative catalog entries of every family and every template path (split-K modes, SIMT, TF32,
# schedules, stream-K, MN-major CuTe operands).
GOLDEN = [
    "sm80_128x256x32_3st",
    "sm80_128x128x32_4st_splitk_parallel4",
    "sm80_simt_f32_128x128x8_4st",
    "sm90_coop_128x256x64_c1x1",
    "sm90_coop_streamk_128x256x64_c1x1",
    "sm90_pp_128x128x64_c2x1",
    "sm90_coop_swapab_splitk4_128x16x128_c1x1",  # A and B swapped: D^T = B^T A^T, column-major D
    "cute_128x256x32_w2x4_4st",
    "cute_128x128x32_w2x2_3st_nt",
    "cute_tf32_128x128x32_w2x2_3st",
    "sm90_fp8_blockwise_coop_128x128x128_c1x1",  # FP8 block scales: the sm90_fp8 template's blockwise kernel TU
    "sm90_grouped_pp_64x128x64_c2x1",  # grouped (pointer-array) GEMM: per-group arrays built on the device
    "sm90_grouped_fp8_blockwise_coop_128x128x128_c1x1",  # grouped FP8 with block scales: per-group scale arrays
    "cute_sm90_ws_128x256x64_c2_4st",  # our CuTe Hopper kernel: producer warpgroup, persistent CTAs
    "cute_sm90_pipe_128x128x64_c1_4st",  # the same kernel's pipelined schedule (one warpgroup issues TMA and multiplies)
]


# -- rendering ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOLDEN)
def test_rendered_source_matches_golden(name):
    for source in render.render(lookup(name).config):
        path = GOLDEN_DIR / source.filename
        if UPDATE_GOLDEN:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source.text)
        assert path.exists(), f"no golden file {path}; run with GEMMCOMPARE_UPDATE_GOLDEN=1"
        assert source.text == path.read_text(), f"{source.filename} differs from its golden file"


def test_golden_dir_has_no_stale_files():
    expected = {s.filename for name in GOLDEN for s in render.render(lookup(name).config)}
    assert {p.name for p in GOLDEN_DIR.glob("*.cu")} == expected


@pytest.mark.parametrize("name", sorted(catalog()))
def test_every_catalog_entry_renders(name):
    config = lookup(name).config
    kernel, entry = render.render(config)
    assert kernel.filename == f"{config.kernel_name}_kernel.cu"
    assert entry.filename == f"{config.procedural_name}.cu"
    for source in (kernel, entry):
        assert "${" not in source.text
        assert '#include "gemmcompare/gemm_abi.h"' in source.text
        assert "torch" not in source.text  # kernel TUs never include torch
    assert f'extern "C" int {render.entry_symbol(config)}(const gc_gemm_args* args, char* err, size_t err_len)' in entry.text
    assert f'extern "C" size_t {render.entry_symbol(config)}_workspace_bytes(const gc_gemm_args* args)' in entry.text
    # the entry TU includes nothing heavier than the ABI header
    assert re.findall(r"#include [<\"](.*)[>\"]", entry.text) == ["gemmcompare/gemm_abi.h"]


def _signatures(text: str, symbol: str) -> list[str]:
    """Each `extern "C" ... symbol(...)` / `symbol_workspace_bytes(...)` parameter list, whitespace-normalised."""
    out = []
    for m in re.finditer(r'extern "C" (int|size_t) (' + re.escape(symbol) + r'(?:_workspace_bytes)?)\(([^)]*)\)', text):
        types = []
        for param in m.group(3).split(","):
            tokens = param.replace("*", "* ").split()
            if len(tokens) > 1 and not tokens[-1].endswith("*") and tokens[-1] not in ("int", "size_t"):
                tokens = tokens[:-1]  # drop the parameter's name: only types must agree
            types.append(" ".join(tokens))
        out.append(f"{m.group(1)} {m.group(2)}({', '.join(types)})")
    return sorted(out)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_entry_declares_the_kernel_as_the_kernel_defines_it(template):
    config = next(e.config for e in catalog().values() if e.config.TEMPLATE == template)
    kernel, entry = render.render(config)
    symbol = render.kernel_symbol(config)
    declared, defined = _signatures(entry.text, symbol), _signatures(kernel.text, symbol)
    assert len(declared) == 2 and declared == defined


@pytest.mark.parametrize("name, runtime", [
    ("sm90_coop_128x256x64_c1x1", {"raster": "along_m", "swizzle": 4}),
    ("sm90_coop_streamk_128x256x64_c1x1", {"decomposition": "split_k", "splits": 3}),
    ("sm80_128x128x32_4st_splitk_serial4", {"slices": 8}),
    ("cute_128x256x32_w2x4_4st", {"swizzle": 1}),
])
def test_runtime_fields_share_the_kernel_tu(name, runtime):
    base = lookup(name).config
    variant = base.replace(**runtime)
    assert variant.kernel_name == base.kernel_name and variant.procedural_name != base.procedural_name
    (k0, e0), (k1, e1) = render.render(base), render.render(variant)
    assert k0 == k1 and e0.filename != e1.filename
    impl0, impl1 = CutlassKernel(base), CutlassKernel(variant)
    assert impl0.build_group == impl1.build_group and impl0.entry_symbol != impl1.entry_symbol


def test_skinny_and_long_k_entries_share_their_kernels():
    """The split-K and fixed-decomposition entries are run-time variants of one stream-K kernel; the
    64-row ping-pong entries are the decode tiles, each cluster a kernel of its own."""
    stream_k = [lookup(f"sm90_coop_splitk{s}_128x128x64_c1x1").config for s in (2, 4, 8, 16)]
    stream_k += [lookup(f"sm90_coop_streamk_{d}_128x128x64_c1x1").config for d in ("sk", "dp")]
    assert {c.kernel_name for c in stream_k} == {stream_k[0].kernel_name}
    assert [(c.decomposition, c.splits) for c in stream_k] == [
        ("split_k", 2), ("split_k", 4), ("split_k", 8), ("split_k", 16), ("stream_k", 1), ("data_parallel", 1)]
    assert stream_k[0].scheduler == "stream_k" and stream_k[0].tile == (128, 128, 64)
    assert "_splitk16" in stream_k[3].procedural_name and render.render(stream_k[3])[1].text.count("kSplits = 16;") == 1
    decode = [lookup(f"sm90_pp_64x{n}x64_c{c}").config for n in (64, 128) for c in ("1x1", "1x2", "2x1")]
    assert all(c.schedule == "pingpong" and c.tile[0] == 64 for c in decode)
    assert len({c.kernel_name for c in decode}) == 6
    assert lookup("sm90_pp_64x128x128_c1x1").config.resolved_stages() == 4  # 48 KB stages next to the epilogue


def test_compile_time_fields_change_the_kernel():
    base = lookup("sm90_coop_128x256x64_c1x1").config
    for change in ({"cluster": (2, 1)}, {"dtype": "bf16"}, {"out": "f16"}, {"stages": 3}, {"epilogue": "nosmem"}):
        assert base.replace(**change).kernel_name != base.kernel_name, change


def test_render_is_pure():
    config = lookup("sm90_coop_128x256x64_c1x1").config
    assert render.render(config) == render.render(config)


def test_every_family_has_templates_and_tags():
    for name, fam in TEMPLATES.items():
        assert fam.config.TEMPLATE == name
        assert (CUTLASS_TEMPLATES_DIR / fam.kernel_template).exists() and (CUTLASS_TEMPLATES_DIR / fam.entry_template).exists()
        assert name in tags.TF32_ELEMENT


def test_family_name_prefixes_are_unique():
    prefixes = [fam.config.NAME_PREFIX for fam in TEMPLATES.values()]
    assert len(set(prefixes)) == len(prefixes)
    for fam in TEMPLATES.values():
        assert fam.config.from_fields({}).kernel_name.startswith(fam.config.NAME_PREFIX + "_")


def test_rendered_values_spell_the_configuration():
    v = render.values(lookup("sm90_coop_128x256x64_c2x1").config.replace(dtype="bf16", out="bf16"))
    assert v["element_a"] == "cutlass::bfloat16_t" and v["element_d"] == "cutlass::bfloat16_t"
    assert v["kernel_schedule"] == "cutlass::gemm::KernelTmaWarpSpecializedCooperative"
    assert v["epilogue_schedule"] == "cutlass::epilogue::TmaWarpSpecializedCooperative"
    assert (v["cluster_m"], v["cluster_n"]) == (2, 1)
    assert v["alignment_d"] == 8
    v = render.values(lookup("sm80_tf32_128x128x32_4st").config)
    assert v["element_a"] == "float" and v["abi_math"] == "GC_MATH_TF32" and v["inst_k"] == 8
    v = render.values(lookup("cute_128x128x32_w2x2_3st_nt").config)
    assert v["a_k_major"] == "false" and v["b_k_major"] == "false"
    assert v["mma_atom"] == "cute::SM80_16x8x16_F32F16F16F32_TN"


# -- configuration fields and validation ------------------------------------------------------------------


def test_defaults_resolve_every_field():
    for fam in TEMPLATES.values():
        cls = fam.config
        config = cls.from_fields({})
        assert all(getattr(config, f.name) is not None for f in cls.FIELDS)
        assert cls.from_fields(config.as_fields()) == config


def test_dtype_dependent_defaults():
    assert Sm80Config.from_fields({"dtype": "tf32"}).instruction == (16, 8, 8)
    assert Sm80Config.from_fields({"dtype": "tf32"}).alignment == 4
    simt = Sm80Config.from_fields({"dtype": "f32"})
    assert simt.opclass == "simt" and simt.instruction == (1, 1, 1) and simt.alignment == 1
    assert CuteSm80Config.from_fields({"dtype": "tf32"}).atom == (16, 8, 8)


INVALID = [
    (Sm90Config, {"tile": [128, 256, 64], "schedule": "pingpong"}, "256 registers per thread"),
    (Sm90Config, {"tile": [256, 256, 64], "schedule": "cooperative"}, "256 registers per thread"),
    (Sm90Config, {"tile": [64, 128, 64], "schedule": "cooperative"}, "multiple of 128"),
    (Sm90Config, {"tile": [128, 256, 64], "stages": 7}, "shared memory"),
    (Sm90Config, {"tile": [96, 128, 64], "schedule": "pingpong"}, "tile M 96"),
    (Sm90Config, {"tile": [128, 128, 48]}, "tile K 48"),
    (Sm90Config, {"schedule": "pingpong", "tile": [128, 128, 64], "scheduler": "stream_k"}, "cooperative schedule only"),
    (Sm90Config, {"cluster": [4, 4]}, "cluster 4x4"),
    (Sm90Config, {"cluster": [3, 1]}, "cluster 3x1"),
    (Sm90Config, {"schedule": "tma_ws", "tile": [128, 128, 64], "epilogue": "tma"}, "nosmem epilogue only"),
    (Sm90Config, {"dtype": "f32"}, "not available in kernel template sm90"),
    (Sm90Config, {"dtype": "tf32", "layout": "tt", "tile": [128, 128, 32]}, "transposed epilogue"),
    (Sm90Config, {"alignment": 4}, "16-byte aligned rows"),
    (Sm90Config, {"splits": 2}, "arguments of the stream_k scheduler"),
    # Skinny and long-K limits (docs/cutlass.md): no 64-row cooperative tile, no split-K under ping-pong,
    # splits only with the split_k decomposition (CUTLASS's can_implement rejects the others).
    (Sm90Config, {"tile": [64, 64, 64], "schedule": "cooperative"}, "64-row tiles: schedule pingpong"),
    (Sm90Config, {"tile": [64, 128, 64], "schedule": "pingpong", "scheduler": "stream_k", "decomposition": "split_k",
                  "splits": 4}, "kernels static_assert against it"),
    (Sm90Config, {"tile": [128, 128, 64], "schedule": "tma_ws", "epilogue": "nosmem", "scheduler": "stream_k"},
     "cooperative schedule only, not tma_ws"),
    (Sm90Config, {"tile": [128, 128, 64], "scheduler": "stream_k", "decomposition": "stream_k", "splits": 4},
     "needs decomposition split_k"),
    (Sm90Config, {"tile": [128, 128, 64], "scheduler": "stream_k", "decomposition": "data_parallel", "splits": 2},
     "needs decomposition split_k"),
    (Sm80Config, {"tile": [128, 256, 32], "warp": [48, 64, 32]}, "not divisible by warp"),
    (Sm80Config, {"tile": [128, 256, 32], "warp": [64, 64, 16]}, "warp K 16 must equal tile K 32"),
    (Sm80Config, {"tile": [128, 256, 64], "warp": [64, 64, 64], "stages": 6}, "shared memory"),
    (Sm80Config, {"tile": [128, 256, 64], "warp": [64, 64, 64], "stages": 3, "arch": 89}, "sm_89 allows 101,376"),
    (Sm80Config, {"dtype": "tf32", "instruction": [16, 8, 16]}, "instruction 16x8x16"),
    (Sm80Config, {"stages": "auto"}, "fixed stage count"),
    (Sm80Config, {"slices": 4}, "needs split_k"),
    (Sm80Config, {"alignment": 1}, "cp.async width"),
    (Sm80Config, {"tile": [128, 128, 16], "warp": [64, 64, 16]}, "tile K 16"),
    (Sm80Config, {"tile": [256, 256, 32], "warp": [64, 128, 32]}, "registers per thread"),
    (CuteSm80Config, {"dtype": "tf32", "layout": "nt"}, "K-major operands only"),
    (CuteSm80Config, {"tile": [80, 128, 32], "warps": [2, 2]}, "not divisible by the MMA tile 32x32"),
    (CuteSm80Config, {"dtype": "tf32", "atom": [16, 8, 16]}, "no SM80 mma.sync atom 16x8x16"),
    (CuteSm80Config, {"tile": [128, 256, 64], "warps": [2, 4], "stages": 5}, "shared memory"),
    (CuteSm80Config, {"tile": [128, 128, 16]}, "two MMA K steps"),
    (CuteSm80Config, {"tile": [96, 128, 32], "warps": [2, 2], "layout": "nt"}, "tile extent 96 must be a multiple of 64"),
    (CuteSm80Config, {"tile": [128, 128, 48], "warps": [2, 2]}, "power-of-two"),
    (CuteSm80Config, {"tile": [128, 128, 32], "warps": [1, 1]}, "registers per thread"),
    (CuteSm80Config, {"stages": "auto"}, "fixed stage count"),
    (Sm80Config, {"acc": "f16"}, "acc f16 needs dtype f16 and out f16"),
    (Sm90Config, {"dtype": "bf16", "out": "f16"}, "writes bf16 or f32"),
    (CuteSm80Config, {"dtype": "tf32", "out": "f16"}, "writes f32 only"),
    (Sm90Config, {"warp": [64, 64, 32]}, "not a field of kernel template sm90"),
    (Sm90Config, {"tile": [128, 128]}, "list of 3 positive integers"),
    (Sm80Config, {"stages": 3.5}, "stages: expected one of"),
    (Sm80Config, {"slices": 0}, "positive integer"),
    (Sm80Config, {"slices": True}, "positive integer"),
]


@pytest.mark.parametrize("cls, fields, message", INVALID)
def test_invalid_combinations_are_rejected_with_the_reason(cls, fields, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        cls.from_fields(fields)


def test_sm90_auto_stages_follow_the_builder_arithmetic():
    c = Sm90Config.from_fields({"tile": [128, 256, 64]})  # 49152-byte stages, 32 KB f32 epilogue
    assert c.epilogue_smem_bytes() == 2 * 128 * 32 * 4
    assert c.resolved_stages() == 4
    assert Sm90Config.from_fields({"tile": [128, 256, 64], "epilogue": "nosmem"}).resolved_stages() == 4
    assert Sm90Config.from_fields({"tile": [128, 128, 64]}).resolved_stages() == 6


def test_pad_multiples_follow_layouts_and_alignment():
    assert Sm90Config.from_fields({"layout": "tn"}).pad_multiples() == (1, 4, 8)  # K for A and B, N for f32 C
    assert Sm90Config.from_fields({"layout": "nt", "out": "f16"}).pad_multiples() == (8, 8, 1)
    assert Sm80Config.from_fields({"dtype": "f32"}).pad_multiples() == (1, 1, 1)
    assert CuteSm80Config.from_fields({}).pad_multiples() == (1, 1, 8)


# -- catalog ----------------------------------------------------------------------------------------


def test_catalog_loads_and_names_are_unique():
    entries = catalog()
    assert len(entries) >= 20
    assert {e.config.TEMPLATE for e in entries.values()} == set(TEMPLATES)
    assert len({e.config.procedural_name for e in entries.values()}) == len(entries)
    assert lookup(entries["sm80_128x256x32_3st"].config.procedural_name).name == "sm80_128x256x32_3st"
    assert all(e.line > 0 for e in entries.values())


def test_catalog_reports_every_problem_with_file_and_line(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "template: sm90\n"
        "defaults: {dtype: f16}\n"
        "configs:\n"
        "  good: {tile: [128, 256, 64]}\n"
        "  bad_pingpong:\n"
        "    tile: [128, 256, 64]\n"
        "    schedule: pingpong\n"
        "  twin: {tile: [128, 256, 64], cluster: [1, 1]}\n")
    (tmp_path / "b.yaml").write_text("template: sm70\nconfigs: {}\n")
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path)
    text = str(info.value)
    assert "a.yaml:5: configs.bad_pingpong: a 128x256 accumulator tile" in text
    assert "a.yaml:8: configs.twin: the same configuration as good" in text
    assert "b.yaml: template: unknown kernel template 'sm70'" in text


def test_catalog_file_defaults_apply(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("family: sm80\ndefaults: {dtype: bf16, stages: 4}\nconfigs:\n  x: {tile: [128, 128, 32], warp: [64, 64, 32]}\n")
    (entry,), problems = load_file(path)
    assert not problems and entry.config.dtype == "bf16" and entry.config.stages == 4


# -- the registered families ---------------------------------------------------------------------------


F16 = BUILTIN_CONTRACTS["f16_f32acc_tn"]


def test_named_configuration_is_an_implementation():
    impl = instantiate(REGISTERED["cutlass"], {"config": "sm90_coop_128x256x64_c1x1"})
    assert isinstance(impl, CutlassKernel)
    assert impl.name == f"cutlass.{impl.config.procedural_name}"
    assert impl.params == {"template": "sm90", **impl.config.as_fields()}  # receipts and report sweep axes
    assert (impl.min_cc, impl.arch_specific, impl.target_arch(90)) == (90, True, "sm_90a")
    assert impl.uses_cutlass and impl.has_workspace
    assert impl.entry_symbol == f"gc_cutlass_{impl.config.procedural_name}"
    req = impl.build_request("sm_90a")
    assert req.group == f"cutlass_{impl.config.kernel_name}" and req.uses_cutlass and req.has_workspace
    assert [s.filename for s in req.sources] == [f"{impl.config.kernel_name}_kernel.cu", f"{impl.config.procedural_name}.cu"]


def test_supports_matches_the_compiled_contract():
    impl = instantiate(REGISTERED["cutlass"], {"config": "sm90_coop_128x256x64_c1x1"})
    odd = GemmProblem(611, 613, 617)
    assert isinstance(impl.supports(odd, F16), Ok)
    assert impl.constraints.padded(odd) == GemmProblem(611, 616, 624)
    for contract, reason in [("bf16_f32acc_tn", "inputs bf16"), ("f16_f16out_f32acc_tn", "output f16"),
                             ("f16_f32acc_tt", "layout tt"), ("f32_tf32_tn", "inputs f32")]:
        s = impl.supports(odd, BUILTIN_CONTRACTS[contract])
        assert isinstance(s, Skip) and reason in s.reason
    tf32 = instantiate(REGISTERED["cutlass"], {"config": "sm80_tf32_128x128x32_4st"})
    assert isinstance(tf32.supports(odd, BUILTIN_CONTRACTS["f32_tf32_tn"]), Ok)
    assert "math mode strict" in tf32.supports(odd, BUILTIN_CONTRACTS["f32_strict_tn"]).reason
    simt = instantiate(REGISTERED["cutlass"], {"config": "sm80_simt_f32_128x128x8_4st"})
    assert isinstance(simt.supports(odd, BUILTIN_CONTRACTS["f32_strict_tn"]), Ok)
    assert simt.constraints.pad_to is None


def test_spec_fields_override_a_named_configuration():
    impl = instantiate(REGISTERED["cutlass"], {"config": "sm90_coop_128x256x64_c1x1", "dtype": "bf16",
                                               "raster": "along_n", "swizzle": 8})
    c = impl.config
    assert (c.dtype, c.raster, c.swizzle, c.tile) == ("bf16", "along_n", 8, (128, 256, 64))
    assert impl.catalog_name == "sm90_coop_128x256x64_c1x1"
    assert isinstance(impl.supports(GemmProblem(4096, 4096, 4096), BUILTIN_CONTRACTS["bf16_f32acc_tn"]), Ok)


def test_family_fields_without_a_name():
    impl = instantiate(REGISTERED["cutlass"], {"template": "sm90", "tile": [128, 128, 64], "cluster": [2, 1],
                                               "schedule": "pingpong"})
    assert impl.config == Sm90Config.from_fields({"tile": [128, 128, 64], "cluster": [2, 1], "schedule": "pingpong"})
    cute = instantiate(REGISTERED["cute"], {"tile": [128, 256, 32], "warps": [2, 4], "stages": 4})
    assert cute.config == lookup("cute_128x256x32_w2x4_4st").config
    assert (cute.min_cc, cute.arch_specific, cute.target_arch(90)) == (80, False, "sm_90")
    named = instantiate(REGISTERED["cute"], {"config": "cute_128x256x32_w2x4_4st"})
    assert named.name == cute.name


@pytest.mark.parametrize("params, reason", [
    ({"template": "sm90", "tile": [128, 256, 64], "schedule": "pingpong"}, "256 registers per thread"),
    ({"config": "sm90_coop_128x256x64_c1x1", "warp": [64, 64, 32]}, "not a field of kernel template sm90"),
    ({"config": "sm80_128x256x32_3st", "family": "sm90"}, "is kernel template sm80, not sm90"),
    ({"config": "no_such_config"}, "no configuration named"),
    ({"dtype": "f16"}, "name a configuration"),
])
def test_invalid_spec_points_become_skip_rows(params, reason):
    impl = instantiate(REGISTERED["cutlass"], params)
    assert isinstance(impl, UnbuildableImplementation)
    s = impl.supports(GemmProblem(64, 64, 64), F16)
    assert isinstance(s, Skip) and reason in s.reason


def test_registered_params_declare_kinds_for_the_spec_expander():
    params = {p.name: p for p in REGISTERED["cutlass"].params}
    assert params["tile"].kind == "shape" and params["tile"].length == 3
    assert params["cluster"].kind == "shape" and params["cluster"].length == 2
    assert params["schedule"].kind == "choice" and "pingpong" in params["schedule"].choices
    assert "sm90_coop_128x256x64_c1x1" in params["config"].choices
    assert set(params["template"].choices) == set(params["family"].choices) == set(TEMPLATES)
    cute = {p.name for p in REGISTERED["cute"].params}
    assert cute == {"config", "types"} | {f.name for f in CuteSm80Config.FIELDS}
    assert all(p.default is None for p in REGISTERED["cutlass"].params)


# -- enumerate and the CLI ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch, dtype", [(90, "f16"), (90, "tf32"), (80, "bf16"), (80, "f32"), (89, "f16")])
def test_enumerate_proposes_valid_configurations(tmp_path, arch, dtype):
    from gemmcompare.cutlass.enumerate import enumerate_configs, to_yaml

    result = enumerate_configs(arch, dtype, kernels="default")
    assert result.configs and result.generated > 0
    assert all(c.dtype == dtype and c.layout == "tn" for c in result.configs)
    path = tmp_path / "proposed.yaml"
    path.write_text(to_yaml(result, "test"))
    entries, problems = load_file(path)  # what it writes loads back as the same configurations
    assert not problems and [e.config for e in entries] == result.configs


def test_enumerate_arch_89_keeps_to_its_shared_memory_budget():
    from gemmcompare.cutlass.enumerate import enumerate_configs

    result = enumerate_configs(89, "f16", kernels="all")
    assert result.configs
    assert all(c.arch == 89 and c.smem_bytes() <= tags.SMEM_CAPACITY[89] for c in result.configs)


def test_cli_list_and_enumerate(tmp_path, capsys):
    assert cli_main(["cutlass", "list"]) == 0
    assert "sm90_coop_128x256x64_c1x1" in capsys.readouterr().out
    assert cli_main(["cutlass", "list", "--fields", "--template", "cute_sm80"]) == 0
    assert "warps" in capsys.readouterr().out
    out = tmp_path / "e.yaml"
    assert cli_main(["cutlass", "enumerate", "--arch", "90", "--dtype", "f16", "--kernels", "default", "--out", str(out)]) == 0
    assert out.read_text().startswith("# Proposed by `gemmcompare cutlass enumerate --arch 90 --dtype f16")


@pytest.mark.parametrize("name", ["sm90_coop_256x128x64_c1x2", "sm90_coop_128x256x64_c2x1"])
def test_the_swizzle_8_prefill_entries_are_their_tiles_kernels(name):
    """The study's swizzle-8 entries cost the build nothing: each is its swizzle-1 twin's kernel (one build
    group), another entry point with the scheduler's max_swizzle_size 8."""
    base, swz8 = lookup(name).config, lookup(f"{name}_swz8").config
    assert (base.swizzle, swz8.swizzle) == (1, 8) and swz8 == base.replace(swizzle=8)
    assert CutlassKernel(base).build_group == CutlassKernel(swz8).build_group
    assert swz8.procedural_name.endswith("_rasterH_swz8")
