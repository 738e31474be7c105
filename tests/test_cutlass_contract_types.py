"""CUTLASS/CuTe configurations take the element types (dtype, out, acc, layout) a spec entry leaves out
from each contract of the experiment (issue 27): one configuration per contract, planned under it only."""

from pathlib import Path

import pytest

from gemmcompare.spec import implementation_entries as spec_module
from gemmcompare.cli import main
from gemmcompare.cutlass.catalog import lookup
from gemmcompare.cutlass.config import ConfigError, contract_type_fields
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.errors import SpecError
from gemmcompare.implementations.base import Ok, Skip
from gemmcompare.implementations.cutlass import CutlassKernel
from gemmcompare.plan import make_plan, narrow
from gemmcompare.spec import parse_spec

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
C2X1 = "sm90_coop_128x256x64_c2x1"


def spec(contracts, *entries, problems="  - sweep: {m: 256, n: 256, k: [1, 33, 1025]}"):
    lines = "\n".join(f"  - {e}" for e in ("library.cublas",) + entries)
    return parse_spec(f"name: t\nproblems:\n{problems}\ncontracts: [{', '.join(contracts)}]\n"
                      f"implementations:\n{lines}\n", "t.yaml")


def cutlass_impls(exp):
    return [i for i in exp.implementations if i.family in ("cutlass", "cute")]


def cells_by_contract(exp):
    out: dict[str, list] = {}
    for cell in make_plan(exp).cells:
        out.setdefault(cell.contract.name, []).append(cell)
    return out


def skips(exp):
    return {(c.contract.name, c.implementation.name): c.support.reason
            for c in make_plan(exp).cells if isinstance(c.support, Skip)}


# -- the mapping contract -> fields -------------------------------------------------------------------

def test_contract_type_fields():
    fields = lambda name: contract_type_fields(BUILTIN_CONTRACTS[name])  # noqa: E731
    assert fields("bf16_bf16out_f32acc_tn") == {"dtype": "bf16", "out": "bf16", "acc": "f32", "layout": "tn"}
    assert fields("f16_f32acc_tn_aligned") == {"dtype": "f16", "out": "f32", "acc": "f32", "layout": "tn"}
    assert fields("f32_tf32_nt") == {"dtype": "tf32", "out": "f32", "acc": "f32", "layout": "nt"}
    assert fields("f32_strict_tt") == {"dtype": "f32", "out": "f32", "acc": "f32", "layout": "tt"}
    assert fields("f16_f16acc_tn")["acc"] == "f16"


# -- an entry without types -------------------------------------------------------------------------

def test_an_entry_without_dtype_under_a_bf16_contract_plans_a_bf16_kernel_and_no_skip():
    exp = spec(["bf16_bf16out_f32acc_tn"], f"cutlass: {{config: {C2X1}}}")
    (impl,) = cutlass_impls(exp)
    assert isinstance(impl, CutlassKernel)
    assert "_tensorop_bf16_bf16_f32_128x256x64_2x1x1_" in impl.name
    assert (impl.config.dtype, impl.config.out, impl.config.acc, impl.config.layout) == ("bf16", "bf16", "f32", "tn")
    assert impl.catalog_name == C2X1 and impl.config.cluster == (2, 1)  # the entry's own fields kept
    assert impl.derived_for is None  # derived from every contract of the experiment: planned as any other
    assert not skips(exp) and exp.row_count == make_plan(exp).row_count == 6


def test_two_contracts_give_two_configurations_each_planned_under_its_own_contract_only():
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn_aligned"], f"cutlass: {{config: {C2X1}}}")
    impls = cutlass_impls(exp)
    assert len(impls) == 2 and len(exp.implementations) == 3
    by_contract = {next(iter(i.derived_for)): i for i in impls}
    assert set(by_contract) == {"bf16_bf16out_f32acc_tn", "f16_f32acc_tn_aligned"}
    assert "_bf16_bf16_f32_" in by_contract["bf16_bf16out_f32acc_tn"].name
    assert "_f16_f32_f32_" in by_contract["f16_f32acc_tn_aligned"].name
    for contract, cells in cells_by_contract(exp).items():
        names = {c.implementation.name for c in cells}
        assert names == {"library.cublas", by_contract[contract].name}, contract  # not its sibling, not a SKIP
    assert not skips(exp)
    assert exp.row_count == make_plan(exp).row_count == 3 * 2 * 2


def test_the_layout_comes_from_the_contract_too():
    exp = spec(["f16_f32acc_nt"], "cute: {config: cute_128x128x32_w2x2_3st}", "cutlass: {config: sm80_128x256x32_3st}")
    assert [i.config.layout for i in cutlass_impls(exp)] == ["nt", "nt"]
    assert not skips(exp)


def test_dtype_dependent_defaults_follow_the_derived_dtype():
    exp = spec(["f32_tf32_tn"], f"cutlass: {{config: {C2X1}}}", "cutlass: {config: sm80_128x256x32_3st}")
    sm90, sm80 = cutlass_impls(exp)
    assert (sm90.config.dtype, sm90.config.alignment) == ("tf32", 4)  # 16 bytes of FP32, not f16's 8
    assert (sm80.config.instruction, sm80.config.alignment) == ((16, 8, 8), 4)
    assert not skips(exp)
    # a spec's dtype override of a named entry recomputes them as well (replace() keeps the old dtype's)
    with pytest.raises(ConfigError, match="alignment must be 4"):
        lookup(C2X1).config.replace(dtype="tf32")
    assert lookup(C2X1).resolve({"dtype": "tf32"}).alignment == 4
    assert lookup(C2X1).resolve({}) is lookup(C2X1).config


# -- named fields, and contracts a template cannot take ----------------------------------------------

def test_an_explicit_dtype_under_another_contract_is_a_skip_as_before():
    exp = spec(["bf16_bf16out_f32acc_tn"], f"cutlass: {{config: {C2X1}, dtype: f16}}")
    (impl,) = cutlass_impls(exp)
    assert "_f16_f32_f32_" in impl.name
    assert set(skips(exp).values()) == {"inputs bf16/bf16 not supported (takes f16)"}
    # under two contracts: one configuration, a PASS candidate under f16, a SKIP under bf16
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn"], f"cutlass: {{config: {C2X1}, dtype: f16}}")
    (impl,) = cutlass_impls(exp)
    assert impl.derived_for is None
    assert {k[0] for k in skips(exp)} == {"bf16_bf16out_f32acc_tn"}


def test_fields_the_spec_leaves_open_still_come_from_the_contract_it_agrees_with():
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn"], f"cutlass: {{config: {C2X1}, dtype: bf16}}")
    names = sorted(i.name for i in cutlass_impls(exp))
    assert len(names) == 2 and "_bf16_bf16_f32_" in names[0] and "_bf16_f32_f32_" in names[1]
    assert set(skips(exp).items()) == {(("f16_f32acc_tn", names[1]), "inputs f16/f16 not supported (takes bf16)")}


def test_types_config_keeps_the_catalog_types():
    exp = spec(["bf16_bf16out_f32acc_tn"], f"cutlass: {{config: {C2X1}, types: config}}")
    (impl,) = cutlass_impls(exp)
    assert "_f16_f32_f32_" in impl.name and impl.derived_for is None
    assert set(skips(exp).values()) == {"inputs bf16/bf16 not supported (takes f16)"}


def test_an_entry_that_names_its_own_dtype_keeps_it():
    exp = spec(["f16_f32acc_tn", "f32_tf32_tn"], "cutlass: {config: sm90_tf32_coop_128x256x32_c1x1}")
    (impl,) = cutlass_impls(exp)
    assert impl.config.dtype == "tf32" and impl.derived_for is None
    assert set(skips(exp)) == {("f16_f32acc_tn", impl.name)}
    assert "inputs f16/f16 not supported" in next(iter(skips(exp).values()))


def test_a_contract_the_template_cannot_take_is_a_skip_with_the_templates_reason():
    exp = spec(["f32_strict_tn", "f16_f32acc_tn"], f"cutlass: {{config: {C2X1}}}")
    reasons = {contract: reason for (contract, _), reason in skips(exp).items()}
    assert set(reasons) == {"f32_strict_tn"}
    assert "dtype f32 is not available in kernel template sm90" in reasons["f32_strict_tn"]
    assert "takes f16)" not in reasons["f32_strict_tn"]
    f16 = [c for c in make_plan(exp).cells if c.contract.name == "f16_f32acc_tn" and c.implementation.family == "cutlass"]
    assert all(isinstance(c.support, Ok) for c in f16) and len(f16) == 3


# -- names, duplicates, limits ----------------------------------------------------------------------

def test_one_configuration_from_two_catalog_entries_is_one_implementation():
    exp = spec(["f16_f32acc_tn", "f16_f32acc_nt"],
               "cute: {config: [cute_128x128x32_w2x2_3st, cute_128x128x32_w2x2_3st_nt]}")
    impls = {i.config.layout: i for i in cutlass_impls(exp)}
    assert set(impls) == {"tn", "nt"} and len(cutlass_impls(exp)) == 2
    assert impls["tn"].derived_for == frozenset({"f16_f32acc_tn"})
    assert impls["nt"].derived_for is None  # derived for nt; the _nt entry's own layout, a SKIP under tn
    assert set(skips(exp)) == {("f16_f32acc_tn", impls["nt"].name)}


def test_the_same_configuration_listed_twice_is_an_error():
    with pytest.raises(SpecError, match="already comes from implementations"):
        spec(["bf16_bf16out_f32acc_tn"], f"cutlass: {{config: {C2X1}}}",
             f"cutlass: {{config: {C2X1}, dtype: bf16, out: bf16}}")


def test_derived_configurations_count_against_the_implementation_limit(monkeypatch):
    monkeypatch.setattr(spec_module, "MAX_IMPLEMENTATIONS", 5)
    spec(["f16_f32acc_tn", "bf16_f32acc_tn"], f"cutlass: {{config: {C2X1}, swizzle: [1, 2]}}")  # 1 + 4
    with pytest.raises(SpecError, match="MAX_IMPLEMENTATIONS"):
        spec(["f16_f32acc_tn", "bf16_f32acc_tn"], f"cutlass: {{config: {C2X1}, swizzle: [1, 2, 4]}}")  # 1 + 6


# -- the commands that use the plan ------------------------------------------------------------------

def test_only_narrows_to_the_derived_configuration_and_its_contract():
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn_aligned"], f"cutlass: {{config: {C2X1}}}")
    narrowed = narrow(exp, only="bf16_bf16")
    (impl,) = narrowed.implementations
    assert impl.derived_for == frozenset({"bf16_bf16out_f32acc_tn"})
    assert {c.contract.name for c in make_plan(narrowed).cells} == {"bf16_bf16out_f32acc_tn"}
    assert narrowed.row_count == make_plan(narrowed).row_count == 3


def test_build_builds_each_derived_configuration_once(monkeypatch):
    from gemmcompare.build import experiment

    monkeypatch.setattr(experiment, "build_extensions", lambda plans, **kw: {p.module_name: p for p in plans})
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn_aligned"], f"cutlass: {{config: {C2X1}}}")
    built = experiment.build_experiment(exp, None, arch="sm_90a", progress=False).by_impl
    for impl in cutlass_impls(exp):
        files = {s.filename for s in built[impl.name].sources}
        assert f"{impl.config.kernel_name}_kernel.cu" in files and built[impl.name].arch == "sm_90a"
    assert len({built[i.name].module_name for i in cutlass_impls(exp)}) == 2


def test_a_run_measures_every_planned_cell_and_nothing_else(tmp_path, monkeypatch):
    from fake_device import BACKEND, DEVICE, GPUS, fake_builds
    from gemmcompare.runner import parent
    from gemmcompare.runner.parent import Runner, RunOptions

    monkeypatch.setattr(parent, "build_for", lambda exp, device, o: fake_builds(exp))
    exp = spec(["bf16_bf16out_f32acc_tn", "f16_f32acc_tn_aligned"], f"cutlass: {{config: {C2X1}}}")
    options = RunOptions(store=tmp_path / "r.db", runs_dir=tmp_path / "runs", progress=False, backend=BACKEND,
                         silence_margin_s=2.0)
    out = Runner(exp, options, device=DEVICE, gpus=GPUS[:1]).run()
    assert out.status == "complete"
    keys = sorted((r.problem, r.contract, r.implementation) for r in out.rows)
    assert keys == sorted(c.key for c in make_plan(exp).cells) and len(keys) == 12
    assert not [r for r in out.rows if r.status.value == "SKIP"]


def test_first_contact_validates_with_no_skip(capsys):
    assert main(["validate", "-v", str(EXPERIMENTS / "first_contact.yaml")]) == 0
    out = capsys.readouterr().out
    assert "= 54 rows, 0 will be SKIP" in out and "skip x" not in out  # cuBLAS, CUTLASS, 6 Hopper steps, mma_sync
    assert "2 of them only under the contracts whose element types they take" in out
