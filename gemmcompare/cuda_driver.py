"""The CUDA driver's own answers about the devices this process may use, through ctypes: name, compute
capability, SMs, L2 and memory, in CUDA's numbering after CUDA_VISIBLE_DEVICES.

Why not torch: the parent of a run only needs these five facts before it builds and hands work to its
measuring workers, and `import torch` costs it 3.4-4.9 s on the H200 (experiments/studies/first-contact/h200/
first-answer-19dd200/: the run's "GPU probe" phase), competing with the worker's own import of torch, which is
the run's critical path. cuInit and these queries take milliseconds and create no CUDA context. torch asks the
same driver (through the runtime), so the numbering and the values are the same (a GPU test compares them).

`devices()` raises DriverUnavailable where the driver cannot answer (no libcuda, an error code); the callers
then ask torch, as before (gemmcompare.device.probe_device, runner/gpus.local_gpus).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

CUDA_SUCCESS = 0
CUDA_ERROR_NO_DEVICE = 100
# CUdevice_attribute values (cuda.h)
ATTR_MULTIPROCESSOR_COUNT = 16
ATTR_L2_CACHE_SIZE = 38
ATTR_COMPUTE_CAPABILITY_MAJOR = 75
ATTR_COMPUTE_CAPABILITY_MINOR = 76


class DriverUnavailable(Exception):
    """The CUDA driver could not be asked (no libcuda.so.1, or a call failed): ask torch instead."""


class DriverMissing(DriverUnavailable):
    """No libcuda.so.1 at all: no NVIDIA driver on this machine, so no CUDA device for torch either (torch's
    CUDA loads the same library)."""


@dataclass(frozen=True)
class DriverDevice:
    index: int
    name: str
    cc: tuple[int, int]
    sm_count: int
    l2_bytes: int
    total_memory_bytes: int


def _load():
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DriverMissing(f"libcuda.so.1: {exc}") from exc


def _check(rc: int, call: str) -> None:
    if rc != CUDA_SUCCESS:
        raise DriverUnavailable(f"{call} returned CUresult {rc}")


def devices(lib=None) -> list[DriverDevice]:
    """Every device this process may use ([] when the driver finds none). `lib`: the driver library
    (tests give a stand-in with the same functions)."""
    lib = lib if lib is not None else _load()
    rc = lib.cuInit(0)
    if rc == CUDA_ERROR_NO_DEVICE:
        return []
    _check(rc, "cuInit")
    count = ctypes.c_int(0)
    _check(lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
    out = []
    for index in range(count.value):
        dev = ctypes.c_int(0)
        _check(lib.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
        name = ctypes.create_string_buffer(256)
        _check(lib.cuDeviceGetName(name, 256, dev), "cuDeviceGetName")
        attrs = {}
        for attr in (ATTR_MULTIPROCESSOR_COUNT, ATTR_L2_CACHE_SIZE, ATTR_COMPUTE_CAPABILITY_MAJOR,
                     ATTR_COMPUTE_CAPABILITY_MINOR):
            value = ctypes.c_int(0)
            _check(lib.cuDeviceGetAttribute(ctypes.byref(value), attr, dev), "cuDeviceGetAttribute")
            attrs[attr] = value.value
        memory = ctypes.c_size_t(0)
        _check(lib.cuDeviceTotalMem_v2(ctypes.byref(memory), dev), "cuDeviceTotalMem_v2")
        out.append(DriverDevice(index, name.value.decode(errors="replace"),
                                (attrs[ATTR_COMPUTE_CAPABILITY_MAJOR], attrs[ATTR_COMPUTE_CAPABILITY_MINOR]),
                                attrs[ATTR_MULTIPROCESSOR_COUNT], attrs[ATTR_L2_CACHE_SIZE], memory.value))
    return out
