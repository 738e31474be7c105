"""The CUDA device a run measures on (architecture names and their arithmetic: arch.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    cc: tuple[int, int]  # compute capability (major, minor)
    sm_count: int
    l2_bytes: int
    total_memory_bytes: int
    index: int = 0

    @property
    def cc_int(self) -> int:
        return self.cc[0] * 10 + self.cc[1]

    @property
    def arch(self) -> str:
        return f"sm_{self.cc_int}"


def driver_devices():
    """The devices the CUDA driver lists (cuda_driver.py: milliseconds, no torch import); [] where torch is built
    without CUDA (it measures nothing, whatever the driver sees), and where there is no driver library at all (a
    machine without an NVIDIA driver: answered in milliseconds, not the seconds torch's import takes); None where
    the driver is there but cannot answer, so that the caller asks torch."""
    from . import cuda_driver
    from .build.toolchain import torch_versions

    if torch_versions().get("cuda") is None:
        return []
    try:
        return cuda_driver.devices()
    except cuda_driver.DriverMissing:
        return []
    except cuda_driver.DriverUnavailable:
        return None


def probe_device(index: int = 0) -> DeviceInfo | None:
    """The CUDA device at `index`, or None when there is none (or torch is built without CUDA). Asked of the
    CUDA driver (driver_devices); where the driver cannot answer, of torch."""
    found = driver_devices()
    if found is None:
        return probe_device_with_torch(index)
    if not found:
        return None
    if not 0 <= index < len(found):
        return probe_device_with_torch(index)  # torch's own error for a bad index, as before
    d = found[index]
    return DeviceInfo(name=d.name, cc=d.cc, sm_count=d.sm_count, l2_bytes=d.l2_bytes,
                      total_memory_bytes=d.total_memory_bytes, index=index)


def probe_device_with_torch(index: int = 0) -> DeviceInfo | None:
    """probe_device through torch (imports it: seconds)."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(index)
    return DeviceInfo(
        name=props.name,
        cc=(props.major, props.minor),
        sm_count=props.multi_processor_count,
        l2_bytes=int(getattr(props, "L2_cache_size", 0)),
        total_memory_bytes=int(props.total_memory),
        index=index,
    )


def probe_build_target(environ=os.environ) -> DeviceInfo | None:
    """The device a build compiles for (its name and compute capability), from NVML: no torch import and
    no CUDA context, so that `build` on a warm cache takes well under a second where probe_device may take
    seconds. Its sm_count and l2_bytes are 0 (NVML does not say; a build needs neither).

    Exact where it answers: no NVIDIA driver means no CUDA device (None), and every GPU this process may see
    (CUDA_VISIBLE_DEVICES) of one compute capability means CUDA's device 0 has it, whatever order CUDA
    numbers them in. Anything else (no pynvml, GPUs of two capabilities, a CUDA_VISIBLE_DEVICES entry NVML
    cannot resolve, such as a MIG slice) asks torch (probe_device)."""
    try:
        import pynvml
    except ImportError:
        return probe_device()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        if getattr(exc, "value", None) in (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, pynvml.NVML_ERROR_DRIVER_NOT_LOADED):
            return None  # the driver that CUDA would need is absent
        return probe_device()
    try:
        visible = environ.get("CUDA_VISIBLE_DEVICES")
        if visible is None:
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        else:
            handles = []
            for entry in (e.strip() for e in visible.split(",")):
                if entry.isdigit():
                    handles.append(pynvml.nvmlDeviceGetHandleByIndex(int(entry)))
                elif entry.startswith("GPU-"):
                    handles.append(pynvml.nvmlDeviceGetHandleByUUID(entry))
                else:  # CUDA stops at an entry it cannot read; MIG slices and the like: let CUDA say
                    return probe_device() if entry else (None if not handles else _from_nvml(pynvml, handles))
        return _from_nvml(pynvml, handles) if handles else None
    except pynvml.NVMLError:
        return probe_device()


def _from_nvml(pynvml, handles) -> DeviceInfo | None:
    """DeviceInfo of the first of `handles` when all share one compute capability, else probe_device()."""
    ccs = {tuple(pynvml.nvmlDeviceGetCudaComputeCapability(h)) for h in handles}
    if len(ccs) != 1:
        return probe_device()
    name = pynvml.nvmlDeviceGetName(handles[0])
    return DeviceInfo(name=name.decode() if isinstance(name, bytes) else str(name), cc=ccs.pop(), sm_count=0,
                      l2_bytes=0, total_memory_bytes=int(pynvml.nvmlDeviceGetMemoryInfo(handles[0]).total))
