"""What a user's own kernel declares about FP8, and which contracts that lets it run: the rule the `custom`
(general ABI) and `python` families share.

    - custom: {name: mine, ..., abi: general, contract: e4m3_bf16out_f32acc_tn_tensor,
               scalings: [tensor, rowcol], accumulation: promote}

`contract` names the element types and the layout the kernel implements; for an FP8 contract its scaling
suffix and `_fastacc` are not read. `scalings` lists the scale shapes the kernel applies (tensor, rowcol,
block: docs/fp8.md); `accumulation` says how it sums FP8 products: `promote` (FP32, or partial sums added
into FP32 at least every 128 of K: what strict contracts model; the default) or `fast` (an accumulator of
fewer bits over all of K: `_fastacc` contracts only). So the kernel is planned under every FP8 contract of
its types and layout whose scaling it lists, strict and `_fastacc` alike when it promotes. An FP8 contract
with no `scalings` declared is a SKIP that says to declare them (the kernel would not be handed scales it
expects, or would be judged on scales it ignores); `scalings` or `accumulation` beside a contract that is
not FP8 is a spec error.
"""

from __future__ import annotations

from difflib import get_close_matches

from ..contracts.precision import PrecisionContract, Scaling
from .base import Ok, Skip, Support

SCALINGS = tuple(s.value for s in Scaling if s is not Scaling.NONE)  # tensor, rowcol, block
ACCUMULATIONS = ("promote", "fast")
# the fields a declared FP8 contract leaves to `scalings` and `accumulation`, and those every user entry
# leaves to the harness (alpha and beta: `alpha_beta`; storage: the run's policy)
FP8_FIELDS = ("scaling", "fast_accum")
IGNORED = ("name", "alpha", "beta", "storage")


def check_scalings(value) -> str | None:
    """Why a `scalings:` value (a tuple of strings, as the spec hands a list parameter) is not a declaration."""
    if not value:
        return f"scalings: list the scale shapes the kernel applies, one or more of {', '.join(SCALINGS)}"
    for name in value:
        if name not in SCALINGS:
            near = get_close_matches(str(name), SCALINGS, n=1, cutoff=0.6)
            return (f"scalings: unknown scale shape {name!r}; expected {', '.join(SCALINGS)}"
                    + (f" (did you mean {near[0]!r}?)" if near else ""))
    if len(set(value)) != len(value):
        return f"scalings: {list(value)} names a scale shape twice"
    return None


def declared_fp8(contract: PrecisionContract, scalings, accumulation) -> tuple[frozenset[Scaling], bool]:
    """(the scale shapes, fast accumulation) an entry declares beside its contract; ValueError when the two
    keys do not fit the contract. `scalings` None or () and `accumulation` None mean not given."""
    if not contract.is_fp8:
        given = [k for k, v in (("scalings", scalings), ("accumulation", accumulation)) if v]
        if given:
            raise ValueError(f"{' and '.join(given)}: only for FP8 contracts (e4m3/e5m2 inputs); contract "
                             f"{contract.name} has {contract.a.value} inputs")
        return frozenset({Scaling.NONE}), False
    if accumulation not in (None, *ACCUMULATIONS):  # the spec checks the choice; a direct caller may not
        raise ValueError(f"accumulation must be one of {', '.join(ACCUMULATIONS)}, got {accumulation!r}")
    return frozenset(Scaling(s) for s in scalings or ()), accumulation == "fast"


def same_types_and_layout(contract: PrecisionContract, declared: PrecisionContract) -> bool:
    """Whether `contract` is the declared one up to what the entry's other keys decide (alpha/beta, storage,
    and under FP8 the scaling and fast accumulation)."""
    ignore = IGNORED + (FP8_FIELDS if declared.is_fp8 else ())
    mine = {k: v for k, v in declared.as_dict().items() if k not in ignore}
    return {k: v for k, v in contract.as_dict().items() if k not in ignore} == mine


def fp8_support(contract: PrecisionContract, scalings: frozenset[Scaling], fast: bool) -> Support:
    """Whether an entry with these declarations runs an FP8 `contract` of its types and layout."""
    if not contract.is_fp8:
        return Ok()
    if not scalings or scalings == {Scaling.NONE}:
        return Skip(f"FP8 contract with {contract.scaling.value} scales, and the entry declares none: add "
                    f"`scalings: [{contract.scaling.value}]` (any of {', '.join(SCALINGS)}) when the kernel applies "
                    f"them (docs/fp8.md, 'Your own FP8 kernel')")
    if contract.scaling not in scalings:
        return Skip(f"scaling {contract.scaling.value} not declared (`scalings: "
                    f"[{', '.join(s.value for s in sorted(scalings, key=lambda s: SCALINGS.index(s.value)))}]`)")
    if fast and not contract.fast_accum:
        return Skip(f"it declares `accumulation: fast` (no promotion of FP8 sums to FP32); contract "
                    f"{contract.name} forbids it (its _fastacc twin allows it)")
    return Ok()


def describe(scalings: frozenset[Scaling], fast: bool) -> str:
    """The declaration as a contracts summary shows it ('' when not FP8)."""
    if scalings == {Scaling.NONE}:
        return ""
    shapes = "/".join(s.value for s in sorted(scalings, key=lambda s: SCALINGS.index(s.value))) or "none declared"
    return f"; scales {shapes}, {'fast' if fast else 'promoted (FP32)'} accumulation"
