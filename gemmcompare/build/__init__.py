"""JIT builds: kernel sources + a generated thin torch binding -> one cached extension per build group."""

from .request import BuildRequest, KernelSource  # noqa: F401
