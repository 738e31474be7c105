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

  fields.py     Field (one field, parsing its values), the fields every kernel template has, TYPE_FIELDS and
                contract_type_fields (the fields a precision contract fixes), ConfigError
  base.py       GemmConfig (what every kernel template's dataclass shares) and TiledGemmConfig
  sm80.py       Sm80Config: CUTLASS 2.x device::GemmUniversal
  sm90.py       Sm90Config: CUTLASS 3.x CollectiveBuilder (TMA + wgmma)
  sm90_fp8.py   Sm90Fp8Config: sm90 with FP8 A and B, per-tensor or block scales
  sm90_grouped.py  Sm90GroupedConfig: sm90's fields for grouped problems (CUTLASS's pointer-array grouped GEMM);
                Sm90GroupedFp8Config: the same with FP8 inputs and block scales
  cute_sm80.py  CuteSm80Config: our own CuTe kernel
  cute_sm90.py  CuteSm90Config: our own CuTe Hopper kernel (TMA, wgmma, an mbarrier pipeline)
"""

from .fields import TYPE_FIELDS, ConfigError, Field, contract_type_fields
from .base import GemmConfig
from .sm80 import Sm80Config
from .sm90 import Sm90Config
from .sm90_fp8 import Sm90Fp8Config
from .sm90_grouped import Sm90GroupedConfig, Sm90GroupedFp8Config
from .cute_sm80 import CuteSm80Config
from .cute_sm90 import CuteSm90Config

__all__ = ["ConfigError", "Field", "GemmConfig", "TYPE_FIELDS", "contract_type_fields", "Sm80Config", "Sm90Config",
           "Sm90Fp8Config", "Sm90GroupedConfig", "Sm90GroupedFp8Config",
           "CuteSm80Config", "CuteSm90Config"]
