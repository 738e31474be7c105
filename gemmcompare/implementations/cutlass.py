"""CUTLASS and CuTe GEMMs: configurations from cutlass_configs/ as implementations.

Two parametrized implementations:

- `cutlass`: a named configuration, a kernel template's fields, or both (fields given next to `config` override
  the named entry's). Any field may be a list: the spec expands the product.
      cutlass: {config: sm90_coop_128x256x64_c1x1}
      cutlass: {config: [sm80_128x256x32_3st, cute_128x256x32_w2x4_4st], dtype: [f16, bf16]}
      cutlass: {template: sm90, tile: [[128, 128, 64], [128, 256, 64]], cluster: [[1, 1], [2, 1]],
                schedule: [cooperative, pingpong]}
      cutlass: {config: sm90_fp8_coop_128x128x128_c1x1}       # FP8 contracts (kernel template sm90_fp8)
      cutlass: {config: sm90_grouped_coop_128x128x64_c1x1}    # grouped problems (kernel template sm90_grouped)
      cutlass: {config: cute_sm90_ws_128x256x64_c2_4st}       # our own CuTe Hopper kernel (kernel template cute_sm90)
- `cute`: the CuTe kernel's fields only (`cute: {tile: [128, 256, 32], warps: [2, 4]}` is
  `cutlass: {template: cute_sm80, tile: [128, 256, 32], warps: [2, 4]}`).

Every configuration's rows are named `cutlass.<procedural name>`. The element types and the layout
(dtype, out, acc, layout) are fields of the configuration, compiled in. Those a spec entry (and its
catalog entry) leaves out come from the experiment's contracts: the entry gives one configuration per
contract, planned under that contract only (`for_contract`; `types: config` keeps the file's and the
kernel template's defaults instead). Under a contract it was not compiled for, a configuration is a SKIP
with the reason. A combination that cannot work (shared memory, divisibility, schedule rules, element
types the kernel template has no kernel for...) is an InvalidConfig, which the planner turns into SKIP
rows before anything is compiled.

The configurations of a grouped kernel template (sm90_grouped) are CutlassGroupedKernel: grouped problems only,
and every other configuration skips grouped problems.
"""

from __future__ import annotations

from typing import Any

from ..build.request import KernelSource
from ..cutlass import kernel_templates
from ..cutlass import render
from ..cutlass.catalog import catalog, lookup
from ..cutlass.config import TYPE_FIELDS, ConfigError, CuteSm80Config, Field, GemmConfig, contract_type_fields
from ..cutlass.tags import FP8_INPUTS
from ..problems import INT32_MAX
from .base import AbiKernel, Constraints, ContractSupport, Ok, Param, Skip, layouts
from .registry import Parametrized, InvalidConfig, register_parametrized


class CutlassKernel(AbiKernel):
    """One rendered CUTLASS/CuTe configuration, built as its own extension (build group = its kernel)."""

    family = "cutlass"
    uses_cutlass = True
    has_workspace = True

    def __init__(self, config: GemmConfig, catalog_name: str | None = None):
        # params: every field, for the rows' receipts and the reports' sweep axes (see `name`).
        super().__init__(config.procedural_name, {"template": config.TEMPLATE, **config.as_fields()})
        self.config = config
        self.catalog_name = catalog_name
        self.min_cc = config.min_cc
        self.arch_specific = config.arch_specific
        self.description = config.describe() + (f" (catalog entry {catalog_name})" if catalog_name else "")
        self.contract_support = ContractSupport(
            inputs=frozenset({config.input_type.storage}),
            outputs=frozenset({config.out_dtype}),
            accumulators=frozenset({config.acc_dtype}),
            maths=frozenset({config.math}),
            layouts=layouts(config.layout),
            alpha_beta=config.READS_C,  # sm90 has no C operand: alpha only, beta must be 0
            scalings=config.scalings,  # FP8 (sm90_fp8): per-tensor or block scales, by its scaling field
            fast_accum=config.fast_accum,  # accumulation fast: _fastacc contracts only
            scaling_note=config.scaling_note,
        )
        pad = config.pad_multiples()
        # its access width: every stored row of A, B and C must start on one (16 bytes; TMA requires it)
        self.constraints = Constraints(pad_to=None if pad == (1, 1, 1) else pad, index_bits=config.INDEX_BITS,
                                       ld_multiples=tuple(config.vector_elements()))
        # Configurations that differ only in run-time arguments share the (expensive) kernel TU: the
        # builder merges requests of one group into one extension and de-duplicates the kernel file.
        self.build_group = f"cutlass_{config.kernel_name}"
        self.batched = config.BATCHED  # sm90: a batch is the kernel's L mode, one launch
        self.entry_symbol = render.entry_symbol(config)
        self.kernel_filter = kernel_templates.kernel_template(config.TEMPLATE).kernel_filter

    def supports(self, problem, contract):
        if problem.is_grouped:
            return Skip("a dense kernel (one GEMM per launch): grouped problems run on the sm90_grouped "
                        "configurations (cutlass_configs/sm90_grouped.yaml)")
        return super().supports(problem, contract)

    def sources(self):
        return tuple(KernelSource(filename=s.filename, text=s.text) for s in render.render(self.config))

    def dynamic_smem_bytes(self) -> int | None:
        """The configuration's shared-memory budget (pipeline stages plus epilogue staging), as validated."""
        fn = getattr(self.config, "smem_bytes", None)
        return fn() if fn else None

    @property
    def name(self) -> str:
        """`cutlass.<procedural name>`: the procedural name already spells every parameter."""
        return f"{self.family}.{self.variant}"


class CutlassGroupedKernel(CutlassKernel):
    """A configuration of kernel template sm90_grouped: one launch computes a GEMM per group (CUTLASS's
    pointer-array grouped GEMM), reached through gemm_abi.h's grouped form (ABI 4).

    It runs grouped problems only (grouped.py's GroupedProblem: `groups`, `ms`, `n`, `k`, `layout`), the contiguous
    layout (A [sum M, K] rows stacked, B [groups, N, K], C [sum M, N]). AbiKernel.prepare hands them over through
    the binding's grouped form (base.py AbiGroupedPrepared: groups, the device offsets, each group's M on the host,
    stride_b).
    """

    takes_grouped = True
    GROUPED_ONLY = "grouped problems only"
    CONTIGUOUS_ONLY = "contiguous layout only"

    @property
    def grouped_fp8(self) -> bool:
        """sm90_grouped_fp8's configurations are the grouped FP8 path (block scales per group): a grouped spec with
        an FP8 contract may name them (spec/load.py _grouped_fp8); sm90_grouped's have none."""
        return self.config.TEMPLATE == "sm90_grouped_fp8"

    def supports(self, problem, contract):
        if not problem.is_grouped:
            return Skip(self.GROUPED_ONLY)
        if problem.layout != "contiguous":
            return Skip(self.CONTIGUOUS_ONLY)
        s = self.contract_support.check(contract)
        if not s:
            return s
        group_m = tuple(problem.ms)
        if problem.groups < 1 or len(group_m) != problem.groups:
            return Skip(f"{problem.groups} groups with {len(group_m)} row counts: expected one M per group, at least one group")
        if any(m < 0 for m in group_m):
            return Skip("a group's M is negative")
        # CUTLASS's group problem shape holds int extents (cute::Shape<int, int, int>) and an int group count
        for what, value in (("groups", problem.groups), ("n", problem.n), ("k", problem.k), ("a group's M", max(group_m)),
                            ("the sum of the groups' M", sum(group_m))):
            if value > INT32_MAX:
                return Skip(f"{what}={value:,} does not fit the kernel's int group problem shape (max {INT32_MAX:,})")
        # TMA reads rows of 16 bytes: every group's B and C rows and A's rows must be whole vectors. Grouped
        # problems are not padded (a padded N or K would change every group's operand layout), so it is a SKIP.
        va, vb, vc = self.config.vector_elements()
        for dim, value, width in (("k", problem.k, max(va, vb)), ("n", problem.n, vc)):
            if value % width:
                return Skip(f"{dim}={value} is not a multiple of {width} (TMA moves 16-byte rows; grouped problems "
                            f"are not padded)")
        return Ok()


# -- spec parameters ----------------------------------------------------------------------------------


def _field_param(field: Field) -> Param:
    return Param(name=field.name, kind=field.kind, default=None, choices=tuple(field.choices),
                       length=field.length, help=field.help)


def _union_fields(classes) -> list[Field]:
    """Each field name once, in first-seen order. A name several kernel templates share gets the union of
    their choices, and each template's help where they differ (`swizzle` means three things)."""
    seen: dict[str, list[tuple[str, Field]]] = {}
    for cls in classes:
        for f in cls.FIELDS:
            seen.setdefault(f.name, []).append((cls.TEMPLATE, f))
    merged = []
    for name, uses in seen.items():
        first = uses[0][1]
        choices = tuple(dict.fromkeys(c for _, f in uses for c in f.choices))
        helps = {f.help for _, f in uses}
        help_text = first.help if len(helps) == 1 else "; ".join(f"{fam}: {f.help}" for fam, f in uses)
        merged.append(Field(name, first.kind, choices, first.length, help_text, first.runtime))
    return merged


def _catalog_names(templates: tuple[str, ...] | None = None) -> tuple[str, ...]:
    return tuple(sorted(n for n, e in catalog().items() if templates is None or e.config.TEMPLATE in templates))


def _kernel(config: GemmConfig, catalog_name: str | None = None) -> CutlassKernel:
    """The implementation of a configuration: a grouped kernel template's configurations run grouped problems."""
    return (CutlassGroupedKernel if config.GROUPED else CutlassKernel)(config, catalog_name)


def make_kernel(params: dict[str, Any], pinned_template: str | None = None) -> CutlassKernel:
    """The factory of both: a catalog entry and/or a kernel template, plus field overrides."""
    given = {k: v for k, v in params.items() if v is not None}
    name = given.pop("config", None)
    given.pop("types", None)  # where the element types came from: for_contract has applied it
    template = given.pop("template", None) or given.pop("family", None) or pinned_template  # family: older name
    try:
        if name is not None:
            try:
                entry = lookup(name)
            except KeyError:
                raise InvalidConfig(f"no configuration named {name!r} in cutlass_configs/") from None
            if template and template != entry.config.TEMPLATE:
                raise InvalidConfig(f"configuration {name} is kernel template {entry.config.TEMPLATE}, not {template}")
            return _kernel(entry.resolve(given), entry.name)
        if template is None:
            raise InvalidConfig(f"name a configuration (config: NAME) or a kernel template (template: {'|'.join(kernel_templates.TEMPLATES)})")
        return _kernel(kernel_templates.kernel_template(template).config.from_fields(given))
    except ConfigError as exc:
        raise InvalidConfig(str(exc)) from None


# -- element types from the contract ------------------------------------------------------------------

TYPES = Param("types", "choice", None, ("contract", "config"),
              help="where the element types (dtype, out, acc, layout) the entry leaves out come from: contract "
                   "(the default: one configuration per contract of the experiment, planned under it only) or "
                   "config (the catalog file's defaults, then the kernel template's: one configuration, a SKIP "
                   "under contracts of other types)")


def _entry(name):
    """The catalog entry a spec names, or None (no name; an unknown one is make_kernel's to report)."""
    try:
        return lookup(name) if name is not None else None
    except KeyError:
        return None


def _takes_fp8(params: dict[str, Any], entry) -> bool | None:
    """Whether the configuration's kernel template is an FP8 one (sm90_fp8), None when the spec names none."""
    template = entry.config.TEMPLATE if entry is not None else params.get("template") or params.get("family")
    if template not in kernel_templates.TEMPLATES:
        return None
    return kernel_templates.TEMPLATES[template].config.DTYPES == FP8_INPUTS


def for_contract(params: dict[str, Any], contract) -> dict[str, Any]:
    """The parameters a spec combination takes under `contract`: each element-type field that neither
    the spec entry nor its catalog entry names is the contract's. Unchanged (the configuration of the
    defaults, whose row under `contract` is a SKIP that says why) when a named field disagrees with the
    contract, when no field values express the contract, when an FP8 kernel template meets a contract
    that is not FP8 or another kernel template an FP8 contract, and under `types: config`."""
    if params.get("types") == "config":
        return params
    wanted = contract_type_fields(contract)
    if isinstance(wanted, str):
        return params
    entry = _entry(params.get("config"))
    fp8 = _takes_fp8(params, entry)
    if fp8 is not None and fp8 != contract.is_fp8:
        return params
    named = {f: params[f] for f in TYPE_FIELDS if params.get(f) is not None}
    if entry is not None:
        named = {**{f: entry.fields[f] for f in TYPE_FIELDS if f in entry.fields}, **named}
    if any(wanted[f] != value for f, value in named.items()):
        return params
    return {**params, **{f: wanted[f] for f in TYPE_FIELDS if f not in named}}


def _register() -> None:
    cutlass_params = [
        Param("config", "choice", None, _catalog_names(), help="a configuration of cutlass_configs/*.yaml"),
        Param("template", "choice", None, tuple(kernel_templates.TEMPLATES),
              help="kernel template: " + " | ".join(kernel_templates.TEMPLATES)),
        Param("family", "choice", None, tuple(kernel_templates.TEMPLATES), help="older name of `template`"),
    ] + [_field_param(f) for f in _union_fields(f.config for f in kernel_templates.TEMPLATES.values())] + [TYPES]
    register_parametrized(Parametrized(
        "cutlass", cutlass_params, lambda params: make_kernel(params),
        description="CUTLASS 2.x (sm80), CUTLASS 3.x (sm90, sm90_fp8, grouped sm90_grouped) and CuTe (cute_sm80, "
                    "cute_sm90) GEMMs "
                    "from cutlass_configs/",
        for_contract=for_contract,
    ))
    cute_params = [
        Param("config", "choice", None, _catalog_names(("cute_sm80",)), help="a cute_sm80 configuration"),
    ] + [_field_param(f) for f in CuteSm80Config.FIELDS] + [TYPES]
    register_parametrized(Parametrized(
        "cute", cute_params, lambda params: make_kernel(params, pinned_template="cute_sm80"),
        description="the CuTe kernel of cutlass_configs/templates/cute_sm80_kernel.cu.tmpl (kernel template cute_sm80)",
        for_contract=for_contract,
    ))


_register()

__all__ = ["CutlassGroupedKernel", "CutlassKernel", "for_contract", "make_kernel"]
