"""Occupancy against the CUDA occupancy calculator's rules and seed 001's measured occupancy cliffs."""

import glob
import os
import random
import shutil
import subprocess

import pytest

from gemmcompare.model.devices import ARCHITECTURES, DEVICES, architecture_limits
from gemmcompare.model.occupancy import BlockResources, occupancy, shared_memory_config

H200 = DEVICES["h200_sxm"]
ADA = DEVICES["rtx_4090"]  # sm_89, like seed 001's RTX 4060 Laptop
A100 = DEVICES["a100_sxm_80gb"]


def test_256_threads_at_255_registers_fit_one_cta_limited_by_registers():
    occ = occupancy(H200, BlockResources(threads=256, registers_per_thread=255))
    assert occ.ctas_per_sm == 1
    assert occ.limited_by == ("registers",)
    assert occ.registers_per_warp == 8192  # 255 x 32 = 8160, rounded up to 256
    assert occ.registers_per_cta == 65536


def test_register_cliff_of_seed_001():
    # 65,536 / (256 x 2) = 128 registers is the ceiling for two 256-thread CTAs per SM
    assert occupancy(ADA, BlockResources(256, 116)).ctas_per_sm == 2
    assert occupancy(ADA, BlockResources(256, 128)).ctas_per_sm == 2
    assert occupancy(ADA, BlockResources(256, 129)).ctas_per_sm == 1
    assert occupancy(ADA, BlockResources(256, 132)).ctas_per_sm == 1  # m16n8k8 on the 8-warp tile: 116 -> 132


def test_theoretical_occupancy_behind_seed_001s_warps_active():
    # 8 warps at 116 registers: 2 CTAs = 16 of 48 warps (measured 32.9% active)
    assert occupancy(ADA, BlockResources(256, 116)).occupancy == pytest.approx(1 / 3)
    # 4 warps at 220 registers (its best kernel) and cuBLAS's 128 threads at 234: 8 of 48 (measured 16.5%)
    assert occupancy(ADA, BlockResources(128, 220)).occupancy == pytest.approx(1 / 6)
    assert occupancy(ADA, BlockResources(128, 234)).occupancy == pytest.approx(1 / 6)


@pytest.mark.parametrize("stages, ctas, limit", [
    (1, 2, "registers"), (2, 2, "registers"), (3, 2, "registers"), (4, 1, "shared_memory"), (6, 1, "shared_memory"),
])
def test_stage_table_of_seed_001(stages, ctas, limit):
    # 128x128x32 FP16 tiles: 16 KiB of A and B per stage; the 8-warp kernel at 116 registers on sm_89
    occ = occupancy(ADA, BlockResources(256, 116, dynamic_shared_bytes=stages * 16 * 1024))
    assert occ.ctas_per_sm == ctas
    assert limit in occ.limited_by


def test_64_registers_allow_1024_threads_on_an_a100():
    occ = occupancy(A100, BlockResources(256, 64))
    assert occ.limit_by_registers * 256 == 1024
    assert occ.limited_by == ("registers",)


def test_registers_are_allocated_per_warp_in_units_of_256():
    occ = occupancy(H200, BlockResources(32, 33))
    assert occ.registers_per_warp == 1280  # 33 x 32 = 1056 -> 1280 (40 per thread)
    assert occupancy(H200, BlockResources(256, 40)).limit_by_registers == occupancy(H200, BlockResources(256, 33)).limit_by_registers
    assert occupancy(H200, BlockResources(256, 41)).limit_by_registers < occupancy(H200, BlockResources(256, 40)).limit_by_registers


def test_registers_are_split_over_four_sub_partitions():
    # 224 registers: 7,168 per warp. The SM's 65,536 would hold 9 such warps, but each quarter (16,384)
    # holds only 2, so 8 one-warp CTAs fit, not 9.
    occ = occupancy(H200, BlockResources(32, 224))
    assert occ.ctas_per_sm == 8 and occ.limited_by == ("registers",)


def test_every_cta_pays_the_1_kb_reservation_rounded_to_128_bytes():
    occ = occupancy(H200, BlockResources(32, 16))
    assert occ.shared_bytes_per_cta == 1024
    assert occ.limit_by_shared_memory == 228
    assert occupancy(H200, BlockResources(32, 16, static_shared_bytes=1)).shared_bytes_per_cta == 1152
    # 114 KB each: two fit 228 KB only without the reservation
    assert occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=114 * 1024)).limit_by_shared_memory == 1
    assert occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=113 * 1024)).limit_by_shared_memory == 2


def test_shared_memory_beyond_the_limits_fits_no_cta():
    assert occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=227 * 1024)).ctas_per_sm == 1
    too_big = occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=227 * 1024 + 1))
    assert too_big.ctas_per_sm == 0 and too_big.limited_by == ("shared_memory",) and too_big.notes
    not_opted_in = occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=64 * 1024,
                                                  max_dynamic_shared_bytes=48 * 1024))
    assert not_opted_in.ctas_per_sm == 0


def test_carveout_preference_limits_shared_memory_per_sm():
    default = occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=20 * 1024))
    assert default.shared_bytes_per_sm == 228 * 1024 and default.limit_by_shared_memory == 10  # 21 KB each
    half = occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=20 * 1024, carveout_percent=50))
    assert half.shared_bytes_per_sm == 132 * 1024 and half.limit_by_shared_memory == 6  # 114 KB -> 132 KB config
    tiny = occupancy(H200, BlockResources(128, 32, dynamic_shared_bytes=20 * 1024, carveout_percent=0))
    assert tiny.shared_bytes_per_sm == 32 * 1024 and tiny.limit_by_shared_memory == 1  # raised to fit one CTA
    assert shared_memory_config(100 * 1024 + 1, architecture_limits((9, 0))) == 132 * 1024
    assert shared_memory_config(101 * 1024, architecture_limits((8, 9))) is None


def test_thread_and_block_limits_per_architecture():
    assert occupancy(H200, BlockResources(1024, 32)).ctas_per_sm == 2
    assert occupancy(ADA, BlockResources(1024, 32)).ctas_per_sm == 1  # 48 warps per SM on sm_89
    assert occupancy(H200, BlockResources(1025, 32)).ctas_per_sm == 0
    small = {cc: occupancy(limits, BlockResources(32, 16)).ctas_per_sm for cc, limits in ARCHITECTURES.items()}
    assert small[(9, 0)] == 32 and small[(8, 9)] == 24 and small[(8, 6)] == 16 and small[(8, 0)] == 32
    assert occupancy(H200, BlockResources(32, 16)).limited_by == ("blocks",)
    assert occupancy(H200, BlockResources(33, 16)).warps_per_cta == 2


def test_unknown_registers_leave_the_register_limit_out():
    occ = occupancy(H200, BlockResources(256, None))
    assert occ.ctas_per_sm == 8 and occ.limited_by == ("threads",) and occ.notes


def test_the_h200_kernels_of_this_project():
    # mma_sync 128x256x64, 3 stages: 252 registers, 147,568 bytes -> one CTA (registers and shared memory)
    occ = occupancy(H200, BlockResources(256, 252, dynamic_shared_bytes=147568))
    assert occ.ctas_per_sm == 1 and occ.limited_by == ("registers", "shared_memory")
    # CUTLASS 3 cooperative: 384 threads at 168 registers, 229,440 bytes
    assert occupancy(H200, BlockResources(384, 168, dynamic_shared_bytes=229440)).ctas_per_sm == 1
    # lab.wmma_staged 32x64 warp tile: 256 threads, 128 registers, 40,960 bytes
    assert occupancy(H200, BlockResources(256, 128, static_shared_bytes=40960)).ctas_per_sm == 2


def test_every_answer_the_h200_runtime_gave():
    # experiments/studies/occupancy/h200/check: cudaOccupancyMaxActiveBlocksPerMultiprocessor on the lent H200
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "experiments", "studies", "occupancy", "h200", "check", "occupancy.csv.xz")
    if not os.path.exists(path):
        pytest.skip("no recorded runtime answers")
    import lzma

    with lzma.open(path, "rt") as f:
        lines = [line for line in f if not line.startswith("#")]
    import csv

    rows = list(csv.DictReader(lines))
    assert len(rows) == 2121
    for r in rows:
        block = BlockResources(int(r["threads"]), int(r["registers"]), int(r["static_smem"]), int(r["dynamic_smem"]),
                               int(r["max_dynamic_smem"]))
        assert occupancy(H200, block).ctas_per_sm == int(r["blocks"]), r


# -- the same rules as CUDA's own calculator, on thousands of random kernels --------------------------------

HARNESS = r"""
#include <cstdio>
#include "cuda_occupancy.h"
int main() {
  int major, minor, tpsm, bpsm, threads, regs; long smem_sm, optin, stat, dyn, maxdyn; int carve;
  while (std::scanf("%d %d %d %d %ld %ld %d %d %ld %ld %ld %d", &major, &minor, &tpsm, &bpsm, &smem_sm, &optin,
                    &threads, &regs, &stat, &dyn, &maxdyn, &carve) == 12) {
    cudaOccDeviceProp p;
    p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = tpsm; p.regsPerBlock = 65536; p.regsPerMultiprocessor = 65536;
    p.warpSize = 32; p.sharedMemPerBlock = 49152; p.sharedMemPerMultiprocessor = smem_sm; p.numSms = 132;
    p.sharedMemPerBlockOptin = optin; p.reservedSharedMemPerBlock = 1024;
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = 1024; a.numRegs = regs; a.sharedSizeBytes = stat;
    a.partitionedGCConfig = PARTITIONED_GC_OFF; a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a.maxDynamicSharedSizeBytes = maxdyn; a.numBlockBarriers = 1; a.virtualResourceCount = 0;
    cudaOccDeviceState s; s.carveoutConfig = carve;
    cudaOccResult r;
    cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, dyn);
    std::printf("%d %d %u\n", (int)e, r.activeBlocksPerMultiprocessor, r.limitingFactors);
  }
  return 0;
}
"""
FLAGS = {"threads": 0x01, "registers": 0x02, "shared_memory": 0x04, "blocks": 0x08, "barriers": 0x10}


def _occupancy_header():
    roots = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"))]
    candidates = [os.path.join(r, "include", "cuda_occupancy.h") for r in roots if r]
    try:
        import site

        for sp in site.getsitepackages():
            candidates += glob.glob(os.path.join(sp, "nvidia", "*", "include", "cuda_occupancy.h"))
    except Exception:
        pass
    return next((c for c in candidates if os.path.isfile(c)), None)


def _random_kernels(seed=20260601, count=4000):
    rng = random.Random(seed)
    for _ in range(count):
        cc = rng.choice(list(ARCHITECTURES))
        threads = rng.choice([rng.randrange(1, 1025), 32 * rng.randrange(1, 33), 1024, 1056])
        regs = rng.choice([rng.randrange(0, 256), rng.randrange(16, 256, 8), 255, 256])
        static = rng.choice([0, 0, rng.randrange(0, 48 * 1024), 48 * 1024])
        dynamic = rng.choice([0, rng.randrange(0, 100 * 1024), rng.randrange(0, 232 * 1024)])
        carveout = rng.choice([None, None, rng.randrange(0, 101)])
        opted = rng.random() < 0.8
        yield cc, BlockResources(threads, regs, static, dynamic, None if opted else max(0, 49152 - static),
                                 carveout_percent=carveout)


@pytest.mark.compile
def test_matches_cuda_occupancy_h_on_random_kernels(tmp_path):
    header = _occupancy_header()
    compiler = shutil.which("g++") or shutil.which("c++")
    if header is None or compiler is None:
        pytest.skip("needs cuda_occupancy.h (a CUDA toolkit) and a C++ compiler")
    src = tmp_path / "occ.cpp"
    src.write_text(HARNESS)
    exe = tmp_path / "occ"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{os.path.dirname(header)}", str(src), "-o", str(exe)],
                   check=True, capture_output=True)
    cases = list(_random_kernels())
    lines = []
    for cc, b in cases:
        lim = ARCHITECTURES[cc]
        max_dynamic = b.max_dynamic_shared_bytes
        if max_dynamic is None:  # the model's "opted in to what it launches with"
            max_dynamic = max(b.dynamic_shared_bytes, 49152 - b.static_shared_bytes)
        lines.append(" ".join(str(v) for v in (
            cc[0], cc[1], lim.max_threads_per_sm, lim.max_blocks_per_sm, lim.shared_memory_per_sm,
            lim.shared_memory_per_block_optin, b.threads, b.registers_per_thread, b.static_shared_bytes,
            b.dynamic_shared_bytes, max_dynamic, -1 if b.carveout_percent is None else b.carveout_percent)))
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    results = out.stdout.split("\n")
    compared = 0
    for (cc, b), line in zip(cases, results):
        status, blocks, factors = (int(v) for v in line.split())
        if status != 0:
            continue  # the calculator refuses the input (e.g. no shared-memory configuration fits)
        occ = occupancy(ARCHITECTURES[cc], b)
        assert occ.ctas_per_sm == blocks, (cc, b, blocks)
        assert sum(FLAGS[r] for r in occ.limited_by) == factors, (cc, b, occ.limited_by, factors)
        compared += 1
    assert compared > 3000
