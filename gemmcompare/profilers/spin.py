"""A kernel of known duration (extensions/timing/spin.cu): it spins on %globaltimer for a given number of
nanoseconds. Every timing method is checked against it (experiments/studies/honest-numbers/small_kernel_timing.py and the GPU
tests): a method's figure should be the spin length times (1 +- 2%) plus the method's fixed intercept.

    spin = load_spin()                 # builds once (cached) like any gemmcompare extension
    launch = spin.launcher(20_000)     # enqueues a 20 us spin on the current stream
    spun_ns, step_ns = spin.last()     # what the last launch measured on the device
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..build.request import BuildRequest, KernelSource
from ..paths import EXTENSIONS_DIR

SPIN_SOURCE = EXTENSIONS_DIR / "timing" / "spin.cu"
ENTRY = "gc_timing_spin"


def spin_request(arch: str = "sm_90") -> BuildRequest:
    return BuildRequest(group="timing_spin", sources=(KernelSource("spin.cu", path=SPIN_SOURCE),), entry=ENTRY,
                        arch=arch)


class SpinKernel:
    def __init__(self, extension):
        import torch

        self.entry = extension.entry(ENTRY)
        self.out = torch.zeros(2, dtype=torch.int64, device="cuda")
        self._empty = torch.empty(0, device="cuda")
        self._ws = torch.empty(0, dtype=torch.uint8, device="cuda")
        self._bias = torch.empty(0, dtype=torch.float32, device="cuda")

    def launcher(self, ns: int) -> Callable[[], None]:
        entry, e, out, ws, bias = self.entry, self._empty, self.out, self._ws, self._bias
        dims, codes = [int(ns), 1, 1, 1, 1, 1], [0] * 10
        return lambda: entry.launch(e, e, out, dims, codes, 1.0, 0.0, ws, bias, bias, bias)

    def last(self) -> tuple[int, int]:
        """(ns the last launch spun, the smallest %globaltimer step it saw)."""
        spun, step = self.out.tolist()
        return int(spun), int(step)


def load_spin(arch: str | None = None, cache_dir: Path | None = None) -> SpinKernel:
    from ..build.extension import BuildFailure, build_extensions, plan_extensions
    from ..device import probe_device

    if arch is None:
        device = probe_device()
        arch = device.arch if device is not None else "sm_90"
    plan = plan_extensions([spin_request(arch)])[0]
    built = build_extensions([plan], cache_dir=cache_dir, progress=False)[plan.module_name]
    if isinstance(built, BuildFailure):
        raise RuntimeError(f"spin kernel did not build: {built.message}")
    return SpinKernel(built)
