"""The inputs of one (problem, contract, fixture): drawn once, rounded to the contract, both references
computed, and a pristine copy kept, so that an implementation that writes into its inputs is caught and
the next one still sees what the references were made from."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..contracts import correctness as corr
from ..contracts.precision import Order, PrecisionContract
from ..contracts.quantize import dequantize, quantize
from ..implementations.operands import Operands, transposed
from ..problems import GemmProblem


FINGERPRINT_CHUNK = 1 << 26  # elements a fingerprint sums at once (two int64 temporaries: 1 GiB)

# The tensors of Operands a row is handed that must come back unchanged (besides the laid-out copies).
INPUT_TENSORS = ("a", "b", "c0", "scale_a", "scale_b", "m_offsets", "masked_counts")


@dataclass
class Draw:
    fixture: str
    seed: int
    operands: Operands  # what every implementation is handed (rounded to the contract's dtypes)
    refs: corr.References  # rounded-input (judges) and original-input (reported)
    pristine: dict[str, Any]  # bit-exact copies of the rounded operands

    def fingerprint(self) -> list[int]:
        """A cheap bitwise checksum of what intact() does not compare bit for bit: the bias, the padding
        allocations of laid-out copies (a kernel that writes into the zero padding another kernel reads) and any
        handed tensor without a pristine copy. The operands themselves are left to intact(), which reads them anyway: an
        MoE layer's weights (7.5G elements) were checksummed twice a check besides, each time in int64 passes.
        Summed in chunks of FINGERPRINT_CHUNK elements, each tensor read in its storage order (no int64 copy of a
        whole large tensor, no contiguous copy of a column-major view)."""
        import torch

        ops = self.operands
        unguarded = [getattr(ops, which) for which in INPUT_TENSORS if which not in self.pristine]
        out = []
        for t in (ops.bias, *ops.padded_allocations(), *unguarded):
            if t is None:
                continue
            flat = as_bits(in_storage_order(t)).reshape(-1)
            total = 0
            for start in range(0, flat.numel(), FINGERPRINT_CHUNK):
                bits = flat[start:start + FINGERPRINT_CHUNK].to(torch.int64)
                weights = torch.arange(start, start + bits.numel(), device=bits.device) % 1021 + 1
                total += int((bits * weights).sum())
            out.append(total)
        return out

    def unchanged_since(self, fingerprint: list[int]) -> bool:
        """Whether nothing handed out was written since `fingerprint` was taken (and since the draw: intact)."""
        return self.fingerprint() == fingerprint and self.intact()

    def intact(self) -> bool:
        """Whether every tensor handed out still holds the pristine bits (the logical operands and each
        laid-out copy). Unlike fingerprint(), this also sees a write made during prepare (a Python row's
        first call runs there)."""
        ops = self.operands
        for which in INPUT_TENSORS:
            if getattr(ops, which) is not None and which in self.pristine and \
                    not same_bits(getattr(ops, which), self.pristine[which]):
                return False
        for (which, order), t in ops.layouts().items():
            want = self.pristine[which]
            if not same_bits(t, want if order is Order.ROW else transposed(want)):
                return False
        return True

    def restore(self) -> None:
        """Undo an implementation that wrote into its inputs."""
        ops = self.operands
        ops.a.copy_(self.pristine["a"])
        ops.b.copy_(self.pristine["b"])
        for which in INPUT_TENSORS[2:]:
            if getattr(ops, which) is not None and which in self.pristine:
                getattr(ops, which).copy_(self.pristine[which])
        ops.forget_layouts()


def draw_inputs(fixture: str, p: GemmProblem, contract: PrecisionContract, seed: int) -> Draw:
    """One fixture's inputs on the device, rounded to the contract, with both references."""
    return make_draw(fixture, p, contract, seed, "cuda")


def make_draw(fixture: str, p: GemmProblem, contract: PrecisionContract, seed: int, device) -> Draw:
    """draw_inputs on any device (the CPU tests use it). Under an FP8 contract A and B are quantized with
    their scales (contracts/quantize.py) and the judging reference is computed on the dequantized values.

    A batched problem's matrix i is the 2-D draw of the same fixture with seed batch_seed(seed, i) (matrix 0
    is the 2-D problem's draw of `seed`), and its references are exactly that draw's: every operand and
    reference is batch x rows x cols. Distinct seeds give every matrix distinct values, so a kernel that
    writes one matrix's product into another's place cannot pass. The bias (one n-vector) is matrix 0's."""
    if p.is_grouped:
        return _grouped_draw(fixture, p, contract, seed, device)
    if p.batch == 1:
        rounded, scales, bias, refs = _draw_matrix(fixture, p, contract, seed, device)
    else:
        import torch

        one = GemmProblem(p.m, p.n, p.k)
        parts = [_draw_matrix(fixture, one, contract, seed, device)]
        bias = parts[0][2]
        parts += [_draw_matrix(fixture, one, contract, corr.batch_seed(seed, i), device, bias)
                  for i in range(1, p.batch)]
        stack = lambda dicts: {key: torch.stack([d[key] for d in dicts]) for key in dicts[0]}  # noqa: E731
        rounded, scales = stack([q[0] for q in parts]), stack([q[1] for q in parts])
        refs = corr.References(*(torch.stack([getattr(q[3], f) for q in parts])
                                 for f in ("rounded", "original", "magnitude")))
    operands = Operands(rounded["a"], rounded["b"], rounded.get("c0"), bias, contract.storage,
                        scales.get("scale_a"), scales.get("scale_b"))
    pristine = {k: v.clone() for k, v in {**rounded, **scales}.items()}
    return Draw(fixture, seed, operands, refs, pristine)


def _grouped_draw(fixture: str, p, contract: PrecisionContract, seed: int, device) -> Draw:
    """A grouped problem's draw: group g is the 2-D draw of its own M x N x K with seed batch_seed(seed, g), so no
    two groups share values and a kernel that writes one group's product into another's rows cannot pass; its
    references are that draw's. An empty group (M = 0) still has its weights: drawn as a one-row problem, of
    which A's row is dropped. Stacked as operands.py lays them out; under FP8, scale_a follows A's rows (rowcol,
    block: stacked; tensor: one per group, groups x 1 x 1) and scale_b is one per group (groups x ...).

    Masked layout: each group's padding rows of A (and of C0) hold NaN. A kernel that computes whole tiles of
    capacity rows from them writes NaN into C's padding, which the check requires to stay NaN (the poison):
    only a write of a number there (another group's rows, a stray offset) fails."""
    import torch

    from ..contracts.precision import Scaling

    masked = p.layout == "masked"
    per_row = contract.scaling in (Scaling.ROWCOL, Scaling.BLOCK)  # FP8 scale_a with a row per row of A
    # Each group's draw goes straight into the stacked tensors (allocated at the first group, from its dtypes and
    # shapes), so that no list of every group's parts is held beside them: a 256-expert layer's weights are 15 GB.
    out: dict[str, Any] = {}

    def put(key: str, g: int, t, rows_like: bool, fill: float = math.nan) -> None:
        """Group g's `t` into out[key]: rows_like (A, C0, a row's scale, references) at its rows (stacked, or
        slab g's first rows, padding `fill`); else out[key][g]."""
        if key not in out:
            if not rows_like:
                shape = (p.groups, *t.shape)
            else:
                shape = (p.m, *t.shape[1:]) if not masked else (p.groups, p.capacity, *t.shape[1:])
            out[key] = torch.full(shape, fill, dtype=t.dtype, device=t.device)
        if not rows_like:
            out[key][g] = t
        elif masked:
            out[key][g, : t.shape[0]] = t
        else:
            out[key][p.offsets[g]: p.offsets[g + 1]] = t

    bias = None
    for g, mg in enumerate(p.ms):
        one = GemmProblem(max(mg, 1), p.n, p.k)
        rounded, scales, drawn_bias, refs = _draw_matrix(fixture, one, contract, corr.batch_seed(seed, g), device, bias)
        bias = drawn_bias if bias is None else bias
        put("a", g, rounded["a"][:mg], True)
        # B stored groups x N x K (K-major): the logical groups x K x N operand is a view of it, so the stored copy a
        # TN row asks for is this very tensor (no second copy of the weights)
        put("b", g, rounded["b"].t(), False)
        if "c0" in rounded:
            put("c0", g, rounded["c0"][:mg], True)
        if scales:
            put("scale_a", g, scales["scale_a"][:mg] if per_row else scales["scale_a"], per_row, 1.0)
            put("scale_b", g, scales["scale_b"], False)
        for field in ("rounded", "original", "magnitude"):
            put(field, g, getattr(refs, field)[:mg], True, 0.0)
        del rounded, scales, refs  # before the next group's draw
    rounded = {"a": out["a"], "b": out["b"].transpose(-2, -1), **({"c0": out["c0"]} if "c0" in out else {})}
    scales = {key: out[key] for key in ("scale_a", "scale_b") if key in out}
    refs = corr.References(out["rounded"], out["original"], out["magnitude"], grouped=p)
    offsets = torch.tensor(p.offsets, dtype=torch.int32, device=device)
    counts = torch.tensor(p.ms, dtype=torch.int32, device=device) if masked else None
    operands = Operands(rounded["a"], rounded["b"], rounded.get("c0"), bias, contract.storage,
                        scales.get("scale_a"), scales.get("scale_b"), offsets, counts)
    pristine = {k: v.clone() for k, v in {**rounded, **scales, "m_offsets": offsets}.items()}
    if counts is not None:
        pristine["masked_counts"] = counts.clone()
    return Draw(fixture, seed, operands, refs, pristine)


def _draw_matrix(fixture: str, p: GemmProblem, contract: PrecisionContract, seed: int, device, bias=None):
    """One matrix's (rounded operands, FP8 scales, bias or None, references); `bias` replaces the drawn one."""
    originals = corr.make_inputs(fixture, p.m, p.n, p.k, contract, seed, device)
    if bias is not None:
        originals["bias"] = bias
    scales = {}
    if contract.is_fp8:
        rounded, values = {}, {}
        for which, dtype in (("a", contract.a), ("b", contract.b)):
            q, scale = quantize(originals[which], dtype, contract.scaling, which)
            rounded[which], scales[f"scale_{which}"] = q, scale
            values[which] = dequantize(q, scale, contract.scaling, which)
    else:
        rounded = {"a": corr.round_to(originals["a"], contract.a), "b": corr.round_to(originals["b"], contract.b)}
        values = rounded
    if "c0" in originals:
        rounded["c0"] = corr.round_to(originals["c0"], contract.c)
        values = {**values, "c0": rounded["c0"]}
    refs = corr.compute_references(originals, values, contract)
    return rounded, scales, originals.get("bias"), refs


def same_bits(x, y) -> bool:
    """Bitwise equality (NaN == NaN), for the other-stream check. Two column-major views are compared in their
    storage order (no contiguous copies of a grouped problem's gigabytes of weights)."""
    import torch

    if x.shape != y.shape:
        return False
    if x.is_contiguous() and y.is_contiguous():
        xs, ys = x, y
    elif transposed_contiguous(x) and transposed_contiguous(y):
        xs, ys = x.transpose(-2, -1), y.transpose(-2, -1)
    else:  # stored in different orders: compare element by element (a square B^T copy has B's shape and strides
        xs, ys = x.contiguous(), y.contiguous()  # swapped, so comparing storage would compare B^T with B)
    return bool(torch.equal(as_bits(xs), as_bits(ys)))


def transposed_contiguous(t) -> bool:
    """Whether t's last two dimensions swapped are contiguous (a column-major matrix, or batch of them)."""
    return t.dim() >= 2 and t.transpose(-2, -1).is_contiguous()


def in_storage_order(t):
    """t itself when contiguous, its last two dimensions swapped when that view is contiguous (a column-major
    operand, as a grouped problem's B is), else a contiguous copy: the same elements, read without a copy
    where possible."""
    if t.is_contiguous():
        return t
    if transposed_contiguous(t):
        return t.transpose(-2, -1)
    return t.contiguous()


def as_bits(t):
    """A tensor's bits as a same-width integer tensor (so that NaN == NaN and -0 != +0)."""
    import torch

    return t.contiguous().view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
