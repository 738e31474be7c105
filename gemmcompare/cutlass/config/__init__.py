"""CUTLASS/CuTe configurations: one frozen dataclass per kernel template, fields one to one with template parameters.

A configuration is built with `<Kernel template>Config.from_fields({...})`: unknown fields and ill-typed values are
rejected, fields left out get their (possibly dtype-dependent) defaults, and `validate()` rejects
combinations that cannot work (shared memory does not fit, tile not divisible by the MMA atom, schedule
not valid for the tile...) with the reason, before anything is compiled. The result is fully resolved:
its procedural name spells every field, so it is the configuration's identity.

Two names per configuration:
- `kernel_name`: the compile-time part (every template parameter). It names the expensive kernel TU,
  so configurations that differ only in run-time arguments share one compiled kernel.
- `procedural_name`: kernel_name plus the run-time arguments (raster order, swizzle, split-K slices...).
  It names the implementation, its entry symbol and its result rows.
"""

from .fields import TYPE_FIELDS, ConfigError, Field, contract_type_fields
from .base import GemmConfig, CuteSm80Config, Sm80Config, Sm90Config, Sm90Fp8Config

__all__ = ["ConfigError", "Field", "GemmConfig", "TYPE_FIELDS", "contract_type_fields", "Sm80Config", "Sm90Config",
           "Sm90Fp8Config", "CuteSm80Config"]
