"""Implementations a spec can name. Importing this package registers every one of them with the registry:
one module per implementation family, each registering on import."""

from . import custom, cutlass, decode, gemv, hopper, lab, library, library_fp8, mma_sync, python, python_library, python_fp8  # noqa: F401  (registration happens on import)
from .registry import FIXED, PARAMETRIZED, InvalidConfig, Parametrized, instantiate  # noqa: F401
