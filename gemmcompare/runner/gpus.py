"""Which GPUs a run measures on, and each GPU's receipt.

Parent side: `local_gpus()` lists the GPUs this process sees (CUDA's numbering, after any
CUDA_VISIBLE_DEVICES), `select_gpus("all" | "0,1")` picks some. Each measuring worker is then started
with CUDA_VISIBLE_DEVICES naming its GPU alone, so it cannot touch another (see worker.py).

Worker side: `gpu_receipt()` describes the one GPU the worker sees: name, UUID, nvidia-smi's index,
PCI bus, clocks, power limit, driver, host. Rows carry the index and UUID; the run's receipt holds one
of these per GPU. `nvml_visible_gpu()` says the same without creating a CUDA context (used to probe
the GPUs of cluster workers before anything is built).
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError

VISIBLE = "CUDA_VISIBLE_DEVICES"


@dataclass(frozen=True)
class GpuChoice:
    """A GPU of this host as the parent sees it, and how to show it alone to a worker."""

    index: int  # CUDA's index in the parent's environment (what --gpus names)
    visible: str  # the CUDA_VISIBLE_DEVICES value that shows the worker this GPU alone
    name: str
    cc: tuple[int, int]

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name})"


def visible_entry(index: int, environ=os.environ) -> str:
    """The CUDA_VISIBLE_DEVICES value naming what this process calls device `index`: the index-th entry
    of the parent's own list when it has one (CUDA numbers visible devices in the listed order)."""
    own = environ.get(VISIBLE)
    if own is None or not own.strip():
        return str(index)
    entries = [e.strip() for e in own.split(",") if e.strip()]
    return entries[index]


def local_gpus() -> list[GpuChoice]:
    """Every GPU this process can use (none without CUDA): the CUDA driver's list (no torch import), or
    torch's where the driver cannot be asked (gemmcompare.device.driver_devices)."""
    from ..device import driver_devices

    found = driver_devices()
    if found is not None:
        return [GpuChoice(d.index, visible_entry(d.index), d.name, d.cc) for d in found]
    import torch

    if not torch.cuda.is_available():
        return []
    out = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        out.append(GpuChoice(i, visible_entry(i), props.name, (props.major, props.minor)))
    return out


def select_gpus(text: str, available: list[GpuChoice]) -> list[GpuChoice]:
    """--gpus all | I[,I...] -> the chosen GPUs ([] on a machine without any: the run then builds and
    says that nothing can be measured here). They must share a compute capability: one build serves
    them all (rows of different GPU models may share a run: every ratio stays within one GPU)."""
    text = (text or "").strip()
    if text != "all" and not re.fullmatch(r"\d+(\s*,\s*\d+)*", text):
        raise UsageError(f"--gpus {text!r}: expected 'all' or GPU indices like 0,1"
                         + (f" (this machine has {len(available)}: 0..{len(available) - 1})" if available else ""))
    if not available:
        return []
    if text == "all":
        chosen = list(available)
    else:
        indices = [int(p) for p in text.split(",")]
        dup = sorted({i for i in indices if indices.count(i) > 1})
        if dup:
            raise UsageError(f"--gpus {text!r}: GPU {dup[0]} is named twice (one worker per GPU)")
        bad = [i for i in indices if i >= len(available)]
        if bad:
            raise UsageError(f"--gpus {text!r}: no GPU {bad[0]}; this machine has {len(available)} "
                             f"(" + ", ".join(g.label for g in available) + ")")
        chosen = [available[i] for i in indices]
    ccs = {g.cc for g in chosen}
    if len(ccs) > 1:
        listing = ", ".join(f"{g.label} cc {g.cc[0]}.{g.cc[1]}" for g in chosen)
        raise UsageError(f"--gpus {text}: the GPUs differ in compute capability ({listing}); one build cannot "
                         f"serve them all: run each kind separately (or as shards) and `gemmcompare merge` the runs")
    return chosen


# -- worker side ---------------------------------------------------------------------------------------

def uuid_text(raw: bytes) -> str:
    """16 UUID bytes as NVIDIA writes them (nvidia-smi -L, NVML, CUDA_VISIBLE_DEVICES): GPU-8-4-4-4-12."""
    h = bytes(raw).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # noqa: BLE001 - no NVML: the receipt says less
        return None


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _nvml_fields(n, handle) -> dict[str, Any]:
    """What NVML tells about one GPU; each field None where this driver does not say."""
    def get(fn, *args):
        try:
            return fn(handle, *args)
        except Exception:  # noqa: BLE001
            return None

    pci = get(n.nvmlDeviceGetPciInfo)
    limit = get(n.nvmlDeviceGetPowerManagementLimit)
    uuid, serial = get(n.nvmlDeviceGetUUID), get(n.nvmlDeviceGetSerial)
    return {
        "index": get(n.nvmlDeviceGetIndex),
        "uuid": _text(uuid) if uuid else None,
        "pci_bus_id": _text(pci.busId) if pci is not None else None,
        "max_sm_clock_mhz": get(n.nvmlDeviceGetMaxClockInfo, n.NVML_CLOCK_SM),
        "max_mem_clock_mhz": get(n.nvmlDeviceGetMaxClockInfo, n.NVML_CLOCK_MEM),
        "application_sm_clock_mhz": get(n.nvmlDeviceGetApplicationsClock, n.NVML_CLOCK_SM),
        "sm_clock_mhz": get(n.nvmlDeviceGetClockInfo, n.NVML_CLOCK_SM),
        "power_limit_w": limit / 1000.0 if limit is not None else None,
        "temperature_c": get(n.nvmlDeviceGetTemperature, n.NVML_TEMPERATURE_GPU),
        "serial": _text(serial) if serial else None,
    }


def gpu_receipt(device_index: int = 0) -> dict[str, Any]:
    """The receipt of the GPU this (worker) process measures on; `uuid` and `index` identify it."""
    import torch

    props = torch.cuda.get_device_properties(device_index)
    raw = getattr(props.uuid, "bytes", None)
    uuid = uuid_text(raw) if raw else "GPU-" + str(props.uuid).removeprefix("GPU-")
    rec: dict[str, Any] = {
        "uuid": uuid, "index": None, "name": props.name, "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count, "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "memory_bytes": int(props.total_memory), "host": platform.node(),
        "cuda_visible_devices": os.environ.get(VISIBLE), "devices_visible": torch.cuda.device_count(),
        "torch": str(torch.__version__),  # a plain str: TorchVersion would make the parent import torch to unpickle it
    }
    n = _nvml()
    if n is not None:
        try:
            fields = _nvml_fields(n, n.nvmlDeviceGetHandleByUUID(uuid))
            rec.update({k: v for k, v in fields.items() if k != "uuid"})
            rec["driver"] = _text(n.nvmlSystemGetDriverVersion())
        except Exception:  # noqa: BLE001 - NVML does not know this UUID (e.g. a MIG slice)
            pass
    return rec


def nvml_visible_gpu(environ=os.environ) -> dict[str, Any] | None:
    """The GPU a process with this environment would measure on (the first CUDA_VISIBLE_DEVICES entry),
    from NVML alone: no CUDA context is created. A numeric entry is taken as nvidia-smi's index, which is
    CUDA's on a host of one GPU model (or with CUDA_DEVICE_ORDER=PCI_BUS_ID). None without NVML."""
    n = _nvml()
    if n is None:
        return None
    entries = [e.strip() for e in (environ.get(VISIBLE) or "0").split(",") if e.strip()]
    if not entries:
        return None
    first = entries[0]
    try:
        handle = n.nvmlDeviceGetHandleByIndex(int(first)) if first.isdigit() else n.nvmlDeviceGetHandleByUUID(first)
        major, minor = n.nvmlDeviceGetCudaComputeCapability(handle)
        rec = _nvml_fields(n, handle)
        rec.update({"name": _text(n.nvmlDeviceGetName(handle)), "compute_capability": f"{major}.{minor}",
                    "memory_bytes": int(n.nvmlDeviceGetMemoryInfo(handle).total), "host": platform.node()})
        return rec
    except Exception:  # noqa: BLE001 - an entry NVML does not know
        return None
