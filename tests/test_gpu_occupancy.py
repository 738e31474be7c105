"""Each kernel's own occupancy query (NAME_occupancy, gemm_abi.h) against the model: the compile half runs
anywhere with nvcc, the runtime's answers need a GPU (experiments/studies/occupancy/occupancy_on_device.py does every kernel)."""

import pytest

from gemmcompare.build.kernel_objects import KernelObjects, compile_request
from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
from gemmcompare.implementations.registry import FIXED, PARAMETRIZED, instantiate
from gemmcompare.model.devices import DEVICES
from gemmcompare.problems import GemmProblem
from gemmcompare.profilers.occupancy import compare_with_model, link_probe, query, abi_problem

SQUARE = GemmProblem(4096, 4096, 4096)


def _kernels():
    return [
        (FIXED["lab.scalar_coalesced"](), "f32_strict_tt"),
        (FIXED["lab.wmma_padded"](), "f16_f32acc_tt"),
        (instantiate(PARAMETRIZED["lab.wmma_staged"], {"warp_tile": (32, 64)}), "f16_f32acc_tt"),
        (instantiate(PARAMETRIZED["mma_sync"], {}), "f16_f32acc_tn"),
        (instantiate(PARAMETRIZED["mma_sync"], {}), "bf16_bf16out_f32acc_tn"),  # the entry's BF16 dispatch
    ]


def _compiled(impl, arch="sm_90") -> KernelObjects:
    built = compile_request(impl.build_request(arch))
    assert isinstance(built, KernelObjects), getattr(built, "message", built)
    return built


@pytest.mark.compile
def test_the_probe_links_and_reaches_the_runtime(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a device is present: the GPU test below asks it")
    impl = FIXED["lab.scalar_coalesced"]()
    lib = link_probe(_compiled(impl).objects, impl.entry_symbol, tmp_path, "sm_90")
    dims, codes = abi_problem(SQUARE, BUILTIN_CONTRACTS["f32_strict_tt"])
    with pytest.raises(RuntimeError, match="cudaFuncGetAttributes"):  # linked; only the device is missing
        query(lib, dims, codes)


@pytest.mark.gpu
@pytest.mark.compile
@pytest.mark.parametrize("index", range(5))
def test_model_occupancy_equals_the_runtime_for_the_launch_the_kernel_makes(index, tmp_path):
    from gemmcompare.device import probe_device
    from gemmcompare.model.devices import device_from_properties

    impl, contract = _kernels()[index]
    live = probe_device()
    device = device_from_properties(live) if live else DEVICES["h200_sxm"]
    line = compare_with_model(impl, BUILTIN_CONTRACTS[contract], SQUARE, device,
                              _compiled(impl, impl.target_arch(live.cc_int)), tmp_path)
    assert line["runtime_threads"] == line["model_threads"], line
    assert line["runtime_blocks_per_sm"] == line["model_ctas_per_sm"] == line["model_from_runtime_inputs"], line
