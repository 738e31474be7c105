"""Where a fully cached `gemmcompare build` spends its second (issue 27), on a GPU machine:
    python3 experiments/studies/first-contact/build_probe_diag.py experiments/lab_ladder.yaml
Prints the build target's probe costs (NVML: import and init; the CUDA driver through ctypes) and a cProfile of
`gemmcompare build SPEC` on a warm cache, top 30 by cumulative time."""

import cProfile
import pstats
import sys
import time

t0 = time.monotonic()
import pynvml  # noqa: E402

t1 = time.monotonic()
pynvml.nvmlInit()
t2 = time.monotonic()
handle = pynvml.nvmlDeviceGetHandleByIndex(0)
cc = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
t3 = time.monotonic()
pynvml.nvmlShutdown()
from gemmcompare import cuda_driver  # noqa: E402

t4 = time.monotonic()
devices = cuda_driver.devices()
t5 = time.monotonic()
print(f"import pynvml {t1 - t0:.3f} s, nvmlInit {t2 - t1:.3f} s, handle+cc {t3 - t2:.3f} s ({cc}); "
      f"ctypes cuInit+queries {t5 - t4:.3f} s ({devices[0].name if devices else None})")

from gemmcompare.cli import main  # noqa: E402

profiler = cProfile.Profile()
t6 = time.monotonic()
profiler.enable()
try:
    main(["build", sys.argv[1], "--no-progress"])
except SystemExit:
    pass
profiler.disable()
print(f"build (in this process, pynvml already imported) {time.monotonic() - t6:.3f} s")
pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
