"""The harness's input-integrity check (runner/inputs.py: Draw.intact and Draw.fingerprint) at every shape class,
layout and storage policy, on the CPU: nothing written reads intact and stable, and one changed element of any
tensor a row is handed is seen.

A square B (N == K) once read "wrote into its input matrices" for every row on the GPU, cuBLAS included: the
column-major copy of B and B's transposed view have the same shape then, and a comparison of storage orders set
B^T's bits against B's. The CPU tests had used non-square shapes only. Hence every shape class here, with a
tall, a wide and a one-row A beside the square ones, and each operand laid out in both orders.
"""

from __future__ import annotations

import itertools

import pytest
import torch

from gemmcompare.contracts.precision import BUILTIN_CONTRACTS, Order
from gemmcompare.problems import GemmProblem
from gemmcompare.runner import inputs
from gemmcompare.runner.inputs import make_draw

SHAPES = {  # (m, n, k)
    "cube": (8, 8, 8),
    "square_b": (5, 8, 8),
    "square_a": (8, 6, 8),
    "square_c": (8, 8, 5),
    "one_row": (1, 8, 8),
    "one_col": (8, 1, 8),
    "tall": (24, 8, 16),
    "wide": (4, 24, 16),
}
CONTRACTS = ["f16_f32acc_tn", "bf16_f32acc_nn", "f32_strict_nt", "f16_f32acc_tt_aligned",
             "f16_f32acc_nn_aligned", "f16_f32acc_bias_relu_tn", "e4m3_bf16out_f32acc_tn_rowcol"]


def _draw(shape, contract, batch):
    m, n, k = SHAPES[shape]
    c = BUILTIN_CONTRACTS[contract]
    if c.scaling.value != "none" and batch > 1:
        pytest.skip("batched problems under FP8 contracts are not drawn")
    draw = make_draw("uniform", GemmProblem(m, n, k, batch=batch), c, 3, "cpu")
    for which, order in itertools.product(("a", "b"), (Order.ROW, Order.COL)):  # every layout a row may ask for
        draw.operands.stored(which, order)
    return draw


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("contract", CONTRACTS)
@pytest.mark.parametrize("shape", SHAPES)
def test_untouched_inputs_read_intact_and_stable(shape, contract, batch):
    draw = _draw(shape, contract, batch)
    first = draw.fingerprint()
    assert draw.intact()
    assert draw.fingerprint() == first and draw.unchanged_since(first)


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("contract", ["f16_f32acc_tn", "f16_f32acc_nn_aligned"])
@pytest.mark.parametrize("shape", ["cube", "square_b", "one_row", "wide"])
def test_one_changed_element_of_any_handed_tensor_is_seen(shape, contract, batch):
    """Each laid-out copy and each logical operand, its last element changed (the last matrix's, batched):
    intact() says no, so unchanged_since() does; restore() brings back what the references were made from."""
    draw = _draw(shape, contract, batch)
    handed = lambda: {**{which: getattr(draw.operands, which) for which in ("a", "b")},  # noqa: E731
                      **{f"{w} {o.name}": view for (w, o), view in draw.operands.layouts().items()}}
    for label in handed():
        t = handed()[label]  # after a restore the laid-out copies are new tensors
        before = draw.fingerprint()
        t[..., -1, -1] += 1
        assert not draw.intact(), label
        assert not draw.unchanged_since(before), label
        draw.restore()
        for which, order in itertools.product(("a", "b"), (Order.ROW, Order.COL)):
            draw.operands.stored(which, order)
        assert draw.unchanged_since(before), label


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("shape", ["cube", "square_b", "wide"])
def test_a_write_into_a_laid_out_copys_padding_or_the_bias_is_seen(shape, batch, monkeypatch):
    """What intact() does not compare (the padding of an aligned copy, the bias) the fingerprint sees."""
    draw = _draw(shape, "f16_f32acc_nn_aligned", batch)
    written = 0
    for (full, view) in draw.operands._cache.values():
        if full is view:
            continue
        saved = view.clone()
        view.fill_(7)  # the padding: the allocation's elements the view does not hold
        padding = (full.reshape(-1) != 7).nonzero().flatten()
        view.copy_(saved)
        if not len(padding):
            continue
        before = draw.fingerprint()
        monkeypatch.setattr(inputs, "FINGERPRINT_CHUNK", 7)  # many chunks, the same sums
        assert draw.fingerprint() == before
        monkeypatch.undo()
        full.view(-1)[padding[-1]] += 1
        assert draw.intact() and not draw.unchanged_since(before)
        full.view(-1)[padding[-1]] -= 1
        assert draw.unchanged_since(before)
        written += 1
    assert written, "the aligned policy pads these shapes"
    bias_draw = make_draw("uniform", GemmProblem(*SHAPES[shape]), BUILTIN_CONTRACTS["f16_f32acc_bias_relu_tn"], 3,
                          "cpu")
    before = bias_draw.fingerprint()
    bias_draw.operands.bias[-1] += 1
    assert not bias_draw.unchanged_since(before)


def test_the_fingerprint_leaves_the_operands_to_intact():
    """An MoE layer's weights are read by intact() alone: the fingerprint sums none of the operands that have a
    pristine copy (a tight layout's copy of one is the operand's own storage)."""
    draw = _draw("cube", "f16_f32acc_tn", 1)
    assert draw.fingerprint() == []
