"""gemmcompare/cuda_driver.py on the CPU: the driver's answers read through ctypes (a stand-in driver), and the
probes that use them (probe_device, local_gpus) with their fallbacks to torch."""

from __future__ import annotations

import ctypes

import pytest

from gemmcompare import cuda_driver, device
from gemmcompare.runner import gpus

REAL_DEVICES = cuda_driver.devices  # the function under test, kept before tests replace it


class FakeDriver:
    """The six driver calls, writing through the pointers ctypes passes, as libcuda does."""

    def __init__(self, specs, init_rc=0, fail=None):
        self.specs, self.init_rc, self.fail = specs, init_rc, fail

    def cuInit(self, flags):
        return self.init_rc

    def cuDeviceGetCount(self, count):
        count._obj.value = len(self.specs)
        return 0

    def cuDeviceGet(self, dev, index):
        dev._obj.value = index
        return 0

    def cuDeviceGetName(self, buf, size, dev):
        buf.value = self.specs[dev.value]["name"].encode()
        return 0

    def cuDeviceGetAttribute(self, value, attr, dev):
        if self.fail == attr:
            return 101  # CUDA_ERROR_INVALID_DEVICE
        s = self.specs[dev.value]
        value._obj.value = {cuda_driver.ATTR_MULTIPROCESSOR_COUNT: s["sms"], cuda_driver.ATTR_L2_CACHE_SIZE: s["l2"],
                            cuda_driver.ATTR_COMPUTE_CAPABILITY_MAJOR: s["cc"][0],
                            cuda_driver.ATTR_COMPUTE_CAPABILITY_MINOR: s["cc"][1]}[attr]
        return 0

    def cuDeviceTotalMem_v2(self, mem, dev):
        mem._obj.value = self.specs[dev.value]["mem"]
        return 0


H200 = {"name": "NVIDIA H200", "sms": 132, "l2": 62914560, "cc": (9, 0), "mem": 150_109_880_320}
L4 = {"name": "NVIDIA L4", "sms": 58, "l2": 50331648, "cc": (8, 9), "mem": 23_580_639_232}


def test_the_drivers_answers_become_devices_in_cudas_numbering():
    got = cuda_driver.devices(FakeDriver([H200, L4]))
    assert got == [cuda_driver.DriverDevice(0, "NVIDIA H200", (9, 0), 132, 62914560, 150_109_880_320),
                   cuda_driver.DriverDevice(1, "NVIDIA L4", (8, 9), 58, 50331648, 23_580_639_232)]


def test_no_device_is_an_empty_list_and_an_error_is_driver_unavailable():
    assert cuda_driver.devices(FakeDriver([H200], init_rc=cuda_driver.CUDA_ERROR_NO_DEVICE)) == []
    with pytest.raises(cuda_driver.DriverUnavailable, match="cuInit returned CUresult 999"):
        cuda_driver.devices(FakeDriver([H200], init_rc=999))
    with pytest.raises(cuda_driver.DriverUnavailable, match="cuDeviceGetAttribute returned CUresult 101"):
        cuda_driver.devices(FakeDriver([H200], fail=cuda_driver.ATTR_L2_CACHE_SIZE))


def test_a_missing_library_is_driver_unavailable(monkeypatch):
    def no_lib(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", no_lib)
    with pytest.raises(cuda_driver.DriverUnavailable, match="libcuda.so.1"):
        cuda_driver.devices()


@pytest.fixture
def cuda_torch(monkeypatch):
    monkeypatch.setattr("gemmcompare.build.toolchain.torch_versions", lambda: {"torch": "2.14.1", "cuda": "13.0"})


def test_probe_device_asks_the_driver_first_and_torch_where_it_cannot(monkeypatch, cuda_torch):
    monkeypatch.setattr(cuda_driver, "devices", lambda: REAL_DEVICES(FakeDriver([L4, H200])))
    monkeypatch.setattr(device, "probe_device_with_torch", lambda index=0: f"torch {index}")
    assert device.probe_device(1) == device.DeviceInfo("NVIDIA H200", (9, 0), 132, 62914560, 150_109_880_320, 1)
    assert device.probe_device(2) == "torch 2"  # a bad index: torch's own error, as before

    def unavailable():
        raise cuda_driver.DriverUnavailable("no libcuda")

    monkeypatch.setattr(cuda_driver, "devices", unavailable)
    assert device.probe_device(0) == "torch 0"
    monkeypatch.setattr(cuda_driver, "devices", lambda: [])
    assert device.probe_device(0) is None


def test_no_driver_library_is_no_device_without_asking_torch(monkeypatch, cuda_torch):
    """A machine without libcuda.so.1 has no CUDA device for torch either: say so in milliseconds (env, analyze
    without --device), never import torch to learn it."""
    def no_lib(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", no_lib)
    monkeypatch.setattr(device, "probe_device_with_torch", lambda index=0: pytest.fail("asked torch"))
    with pytest.raises(cuda_driver.DriverMissing):
        cuda_driver.devices()
    assert device.probe_device(0) is None


def test_a_cpu_only_torch_sees_no_device_whatever_the_driver_says(monkeypatch):
    monkeypatch.setattr("gemmcompare.build.toolchain.torch_versions", lambda: {"torch": "2.14.1+cpu", "cuda": None})
    monkeypatch.setattr(cuda_driver, "devices", lambda: REAL_DEVICES(FakeDriver([H200])))
    assert device.probe_device(0) is None and gpus.local_gpus() == []


def test_local_gpus_from_the_driver_name_each_gpu_for_its_worker(monkeypatch, cuda_torch):
    monkeypatch.setattr(cuda_driver, "devices", lambda: REAL_DEVICES(FakeDriver([H200, H200])))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    got = gpus.local_gpus()
    assert [(g.index, g.visible, g.name, g.cc) for g in got] == [(0, "3", "NVIDIA H200", (9, 0)),
                                                                  (1, "5", "NVIDIA H200", (9, 0))]


def test_the_workers_gpu_receipt_unpickles_without_torch(monkeypatch):
    """The worker sends its GPU's receipt to the parent (WorkerReady). The parent no longer imports torch
    (the driver answers its probe), so anything in the receipt that pickles as a torch class would make its
    unpickling import torch there: torch.__version__ is a TorchVersion, and it cost a warm quickstart 3-4 s
    of `worker wait` on the H200 (the worker ready at 4.1 s from its spawn, the parent reading it at 6.9 s)."""
    import pickle
    import subprocess
    import sys
    from types import SimpleNamespace

    import torch

    props = SimpleNamespace(uuid="GPU-00000000-0000-0000-0000-000000000000", name="NVIDIA H200", major=9, minor=0,
                            multi_processor_count=132, L2_cache_size=50 * 2**20, total_memory=140 * 2**30)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(gpus, "_nvml", lambda: None)
    receipt = gpus.gpu_receipt(0)
    assert receipt["torch"] == torch.__version__
    code = ("import pickle, sys; r = pickle.loads(sys.stdin.buffer.read()); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(receipt), capture_output=True, check=True)
    assert out.stdout.decode().strip() == "[]", f"unpickling the receipt imported {out.stdout.decode().strip()}"
