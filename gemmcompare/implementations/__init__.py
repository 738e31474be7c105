"""Implementation families. Importing this package registers every family with the registry."""

import importlib

from .registry import FAMILIES, FIXED, Family, InvalidConfig, instantiate  # noqa: F401

# One module per family; each registers its implementations on import. A family whose module is not
# present yet is simply absent from the registry.
for _module in ("library", "lab", "mma_sync", "cutlass", "custom"):
    try:
        importlib.import_module(f"{__name__}.{_module}")
    except ModuleNotFoundError as _exc:  # only a missing family module is tolerated, not a broken one
        if _exc.name != f"{__name__}.{_module}":
            raise
