"""--contract: a run or build of some of a spec's contracts (each with its own baseline), its own spec hash and
receipt line; a name that is not one of the spec's is exit 2 naming them and the nearest."""

from pathlib import Path

import pytest

from gemmcompare.cli import main
from gemmcompare.errors import InputError
from gemmcompare.plan import make_plan, narrow
from gemmcompare.spec import load_spec

FP8 = Path(__file__).resolve().parents[1] / "experiments" / "fp8.yaml"


def test_contracts_keep_their_own_baselines_and_get_their_own_hash():
    exp = load_spec(FP8)
    assert len(exp.contracts) == 7
    some = narrow(exp, contracts="e4m3_bf16out_f32acc_tn_rowcol, bf16_bf16out_f32acc_tn")
    assert [c.name for c in some.contracts] == ["e4m3_bf16out_f32acc_tn_rowcol", "bf16_bf16out_f32acc_tn"]
    assert some.baseline_for("e4m3_bf16out_f32acc_tn_rowcol") == "library.cublaslt_fp8"
    assert some.baseline_for("bf16_bf16out_f32acc_tn") == "library.cublas"
    assert dict(some.narrowed)["contracts"] == "e4m3_bf16out_f32acc_tn_rowcol, bf16_bf16out_f32acc_tn"
    assert some.spec_hash != exp.spec_hash
    assert {cell.contract.name for cell in make_plan(some).cells} == {c.name for c in some.contracts}
    assert some.row_count < exp.row_count
    both = narrow(exp, shapes="8192x8192x8192", contracts="e4m3_bf16out_f32acc_tn_block")
    assert len(both.problems) == 1 and [c.name for c in both.contracts] == ["e4m3_bf16out_f32acc_tn_block"]
    assert both.spec_hash != narrow(exp, shapes="8192x8192x8192").spec_hash


@pytest.mark.parametrize("names, says", [
    ("e4m3_bf16out_f32acc_tn_rowcl", "did you mean 'e4m3_bf16out_f32acc_tn_rowcol'"),
    (" , ", "names no contract"),
    ("f32_strict_tn", "is not one of the spec's contracts"),
])
def test_a_contract_the_spec_does_not_have_is_named(names, says):
    with pytest.raises(InputError, match=says):
        narrow(load_spec(FP8), contracts=names)


def test_run_with_an_unknown_contract_is_exit_2_before_any_work(tmp_path, capsys):
    code = main(["run", str(FP8), "--contract", "e4m3_bf16out_f32acc_tn_blok", "--store", str(tmp_path / "g.db"),
                 "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "e4m3_bf16out_f32acc_tn_block" in err and not (tmp_path / "runs").exists()
