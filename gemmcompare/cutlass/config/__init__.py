"""CUTLASS/CuTe configurations: one frozen dataclass per kernel template, fields one to one with template parameters."""

from .base import (ConfigError, CuteSm80Config, Field, GemmConfig, Sm80Config, Sm90Config, Sm90Fp8Config, TYPE_FIELDS,
                   contract_type_fields)

__all__ = ["ConfigError", "Field", "GemmConfig", "TYPE_FIELDS", "contract_type_fields", "Sm80Config", "Sm90Config",
           "Sm90Fp8Config", "CuteSm80Config"]
