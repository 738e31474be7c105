"""Implementations a spec can name. Importing this package registers every one of them with the registry:
one module per implementation family, each registering on import."""

from . import (custom, cutlass, decode, gemv, hopper, lab, library, library_fp8, library_grouped, mma_sync,  # noqa: F401
               python, python_library, python_fp8)  # (registration happens on import)
from .registry import FIXED, PARAMETRIZED, InvalidConfig, Parametrized, instantiate  # noqa: F401
