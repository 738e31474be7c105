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
    assert draw.fingerprint() == first


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("contract", ["f16_f32acc_tn", "f16_f32acc_nn_aligned"])
@pytest.mark.parametrize("shape", ["cube", "square_b", "one_row", "wide"])
def test_one_changed_element_of_any_handed_tensor_is_seen(shape, contract, batch):
    """Each laid-out copy and each logical operand, its last element changed (the last matrix's, batched):
    intact() says no and the fingerprint moves; restore() brings back what the references were made from."""
    draw = _draw(shape, contract, batch)
    handed = lambda: {**{which: getattr(draw.operands, which) for which in ("a", "b")},  # noqa: E731
                      **{f"{w} {o.name}": view for (w, o), view in draw.operands.layouts().items()}}
    for label in handed():
        t = handed()[label]  # after a restore the laid-out copies are new tensors
        before = draw.fingerprint()
        t[..., -1, -1] += 1
        assert not draw.intact(), label
        assert draw.fingerprint() != before, label
        draw.restore()
        for which, order in itertools.product(("a", "b"), (Order.ROW, Order.COL)):
            draw.operands.stored(which, order)
        assert draw.intact() and draw.fingerprint() == before, label
