"""One registration path for the hand-written kernel families whose spec parameters are a C++ `Config<...>`
template's (decode, gemv, mma_sync).

A family declares:
- a frozen dataclass of its parameters, subclassing `KernelConfig`: their checks (`problems`, every reason the
  configuration cannot work, so an impossible combination is a SKIP row before anything compiles), the
  canonical parameters naming the row, the template instantiation, and what it is built for: its element type
  pairs and, where the family instantiates one kernel per B layout, its variants;
- an `AbiKernel` subclass of `ConfigKernel` (contracts, shape constraints, its description and SKIPs);
- `register_config_family(name, params, kernel, description)`: parsing, defaults, validation and registration.

Everything else is here, once: the names, the translation units and the entry. A configuration is rendered into
one tiny TU per launcher (a variant times a pair of element types), each one explicit instantiation, and an entry
TU that calls the launcher the launch's arguments select. Names are procedural, a pure function of the
configuration (tested on the CPU):

    gc_<family>_<ident>_<variant><types>_launch    a launcher, and its _occupancy query
    gc_<family>_<ident>_<variant><types>_tag       the type naming its kernels in the ptxas report
    <family>_<ident>_<variant><types>.cu           its translation unit
    gc_<family>_<entry ident>                      the entry, in <family>_<entry ident>_entry.cu

<variant> is empty in a family built for one layout, and <types> is the family's spelling of a type pair
(`type_part`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from ..build.request import KernelSource
from ..dtypes import DType
from ..paths import EXTENSIONS_DIR
from .base import AbiKernel, Param, dispatch_entry
from .registry import InvalidConfig, Parametrized, register_parametrized

TypePair = tuple[DType, DType]  # (A and B, C)

# C++ spellings of the element types, and their gc_dtype codes in gemm_abi.h.
CPP_TYPE = {DType.F16: "__half", DType.BF16: "__nv_bfloat16", DType.F32: "float"}
ABI_DTYPE = {DType.F16: "GC_F16", DType.BF16: "GC_BF16", DType.F32: "GC_F32"}


def pair_tag(pair: TypePair) -> str:
    """A pair of types as file, symbol and tag names spell it: `f16_f32`, `bf16_bf16`, ..."""
    return f"{pair[0].value}_{pair[1].value}"


def pair_name(pair: TypePair) -> str:
    return f"{pair[0].value}->{pair[1].value}"


class KernelConfig:
    """The parameters of one instantiation of a family's `Config<...>` template: the base of a frozen dataclass
    whose fields are the spec's parameters, with their defaults."""

    family: ClassVar[str]  # the family's name: prefixes files and symbols
    header: ClassVar[str]  # the kernel header every instance TU includes (relative to extensions/)
    namespace: ClassVar[str]  # the C++ namespace of its Config<...> and launch<...>

    # -- what a family defines ------------------------------------------------------------------------
    @property
    def ident(self) -> str:
        """The procedural name of the instantiation: names files, symbols, tags."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """Every reason this configuration cannot work (empty when it can)."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The canonical parameters (the implementation's name is built from these)."""
        raise NotImplementedError

    @property
    def type_pairs(self) -> tuple[TypePair, ...]:
        """The (A and B, C) element types this configuration is built for."""
        raise NotImplementedError

    def config_template(self, variant: str) -> str:
        """The C++ type of the instantiation built for `variant`: `gc::decode::Config<32, 8, 2, 0>`."""
        raise NotImplementedError

    def instance_comment(self, variant: str, types: TypePair) -> str:
        """The lines (each starting with //) after the first of a launcher's TU: what it instantiates."""
        raise NotImplementedError

    # -- what a family may refine ------------------------------------------------------------------------
    @property
    def variants(self) -> tuple[str, ...]:
        """What besides the types the configuration builds one launcher per (mma_sync: B's layouts)."""
        return ("",)

    def type_part(self, types: TypePair) -> str:
        """A pair of types in launcher names (after the variant)."""
        return pair_tag(types)

    def variant_condition(self, variant: str) -> str:
        """The C condition on `args` that selects `variant` in the entry ("" when there is one variant)."""
        return ""

    @property
    def entry_ident(self) -> str:
        """What names the entry (after gc_<family>_)."""
        return self.ident

    def entry_comment(self) -> str:
        """The first lines (each starting with //) of the entry's TU."""
        return (f"// Generated by gemmcompare/implementations/{self.family}.py: the entry of {self.family} "
                f"{self.ident}\n"
                f"// ({self.type_pairs_text}), dispatching on the types.\n")

    @property
    def built_for(self) -> str:
        """What the entry says it was built for, when a launch asks for something else."""
        return f"A/B -> C types {self.type_pairs_text}"

    @classmethod
    def from_params(cls, params: dict[str, Any]):
        """Spec parameters -> a checked configuration (the dataclass's default for a parameter left None).
        Raises InvalidConfig with the reasons."""
        cfg = cls(**{f.name: params[f.name] for f in dataclasses.fields(cls) if params.get(f.name) is not None})
        cfg.validate()
        return cfg

    # -- checks ----------------------------------------------------------------------------------------
    def validate(self) -> None:
        problems = self.problems()
        if problems:
            raise InvalidConfig("; ".join(problems))

    # -- names -----------------------------------------------------------------------------------------
    @property
    def type_pairs_text(self) -> str:
        return ", ".join(pair_name(p) for p in self.type_pairs)

    def launchers(self) -> list[tuple[str, TypePair]]:
        """(variant, types) of every launcher, in the entry's order."""
        return [(v, t) for v in self.variants for t in self.type_pairs]

    def _launcher_name(self, variant: str, types: TypePair) -> str:
        return f"{self.ident}_{variant}{self.type_part(types)}"

    def launcher_symbol(self, variant: str, types: TypePair) -> str:
        """extern "C" symbol of one launcher, which the entry calls."""
        return f"gc_{self.family}_{self._launcher_name(variant, types)}_launch"

    def launcher_tag(self, variant: str, types: TypePair) -> str:
        """The type naming one launcher's kernels (it appears in their mangled names)."""
        return f"gc_{self.family}_{self._launcher_name(variant, types)}_tag"

    def launcher_filename(self, variant: str, types: TypePair) -> str:
        return f"{self.family}_{self._launcher_name(variant, types)}.cu"

    @property
    def entry_symbol(self) -> str:
        return f"gc_{self.family}_{self.entry_ident}"

    @property
    def entry_filename(self) -> str:
        return f"{self.family}_{self.entry_ident}_entry.cu"

    @property
    def kernel_filter(self) -> str:
        """Every kernel of the configuration (all variants and types)."""
        return self.kernel_filter_for_types(*self.type_pairs)

    def kernel_filter_for_types(self, *pairs: TypePair) -> str:
        """The kernels of these pairs of types (every variant): a row's registers are its own types' kernels'."""
        variants = "" if self.variants == ("",) else f"(?:{'|'.join(self.variants)})"
        alts = "|".join(re.escape(self.type_part(p)) for p in pairs)
        return rf"gc_{self.family}_{re.escape(self.ident)}_{variants}(?:{alts})_tag"

    # -- rendering -------------------------------------------------------------------------------------
    def render_launcher(self, variant: str, types: TypePair) -> str:
        """The translation unit of one launcher: its symbol (and _occupancy query) calling
        namespace::launch<Config, tag, A/B type, C type>."""
        if types not in self.type_pairs:
            raise ValueError(f"{self.family} {self.ident} is not built for {pair_name(types)} "
                             f"(only {self.type_pairs_text})")
        symbol, tag = self.launcher_symbol(variant, types), self.launcher_tag(variant, types)
        cfg = f"gc_{self.family}_{self.ident}" + (f"_{variant}" if variant else "") + "_config"
        launch = f"{self.namespace}::launch<{cfg}, {tag}, {CPP_TYPE[types[0]]}, {CPP_TYPE[types[1]]}>"
        return (
            f"// Generated by gemmcompare/implementations/{self.family}.py: one instantiation of "
            f"{self.header.split('/')[-1]}.\n"
            f"{self.instance_comment(variant, types)}"
            f'#include "{self.header}"\n'
            f"\n"
            f"struct {tag};  // names the kernels in the ptxas report\n"
            f"using {cfg} = {self.config_template(variant)};\n"
            f"\n"
            f'extern "C" int {symbol}(const gc_gemm_args* args, char* err, size_t err_len) {{\n'
            f'  return {launch}(args, "{symbol}", err, err_len);\n'
            f"}}\n"
            f"\n"
            f'extern "C" int {symbol}_occupancy(const gc_gemm_args* args, gc_occupancy* out, char* err, '
            f'size_t err_len) {{\n'
            f'  return {launch}(args, "{symbol}", err, err_len, out);\n'
            f"}}\n"
        )

    def render_entry(self) -> str:
        def when(variant: str, t: TypePair) -> str:
            types = f"args->dtype_a == {ABI_DTYPE[t[0]]} && args->dtype_c == {ABI_DTYPE[t[1]]}"
            return " && ".join(c for c in (self.variant_condition(variant), types) if c)

        return dispatch_entry(
            self.entry_comment(), self.entry_symbol,
            [(when(v, t), self.launcher_symbol(v, t)) for v, t in self.launchers()],
            f"{self.family} {self.ident}: built for {self.built_for} only")

    def sources(self) -> tuple[KernelSource, ...]:
        out = [KernelSource(self.launcher_filename(v, t), text=self.render_launcher(v, t)) for v, t in self.launchers()]
        out.append(KernelSource(self.entry_filename, text=self.render_entry()))
        return tuple(out)


class PairConfig(KernelConfig):
    """A configuration built alike for every layout it takes: one launcher per pair of types (decode, gemv)."""

    def symbol(self, types: TypePair | None = None) -> str:
        """extern "C" symbol: the entry (types None) or the launcher of one pair of types, which the entry calls."""
        return self.entry_symbol if types is None else self.launcher_symbol("", types)

    def tag(self, types: TypePair) -> str:
        return self.launcher_tag("", types)

    def instance_filename(self, types: TypePair) -> str:
        return self.launcher_filename("", types)

    def render_instance(self, types: TypePair) -> str:
        return self.render_launcher("", types)


class ConfigKernel(AbiKernel):
    """The AbiKernel of one configuration: its entry, its kernels in the ptxas report, its sources."""

    include_dirs = (str(EXTENSIONS_DIR),)

    def __init__(self, cfg: KernelConfig):
        super().__init__("", cfg.params())
        self.config = cfg
        self.entry_symbol = cfg.entry_symbol
        self.kernel_filter = cfg.kernel_filter

    def kernel_filter_for(self, contract) -> str:
        """The kernels of the contract's pair of types (those a launch under it can run)."""
        pair = (contract.a, contract.c)
        return self.config.kernel_filter_for_types(pair) if pair in self.config.type_pairs else self.kernel_filter

    def sources(self):
        return self.config.sources()


def register_config_family(name: str, params: list[Param], kernel: type[ConfigKernel], config: type[KernelConfig],
                           description: str) -> None:
    """Register `name`: a spec's parameters become `kernel(config.from_params(...))`, or a SKIP row with the
    reasons the configuration cannot work."""
    def make(values: dict[str, Any]) -> ConfigKernel:
        return kernel(config.from_params(values))

    register_parametrized(Parametrized(name, params, make, description=description))
