"""On the GPU: the CUDA driver's answers (gemmcompare/cuda_driver.py, what a run's parent probes with) equal
torch's for every device this process sees. Runs on the device machine (marker `gpu`)."""

import pytest

from gemmcompare import cuda_driver
from gemmcompare.device import probe_device, probe_device_with_torch
from gemmcompare.runner.gpus import local_gpus

pytestmark = pytest.mark.gpu


def test_the_driver_and_torch_describe_the_same_devices():
    import torch

    found = cuda_driver.devices()
    assert len(found) == torch.cuda.device_count() and found
    for d in found:
        assert probe_device(d.index) == probe_device_with_torch(d.index), d
    assert [(g.index, g.name, g.cc) for g in local_gpus()] == [(d.index, d.name, d.cc) for d in found]
