"""The configuration list of the Triton FP8 GEMM (`library.triton_fp8`), as data: what the row autotunes over,
what `library.triton_fp8: {config: NAME}` fixes, and what `{config: auto}` (or `tune: auto`) races per problem
through the harness's pick (gemmcompare/tuning). No triton import: the list is checked and planned on any machine.

Each entry is a configuration published as good for FP8 on Hopper, with where it comes from:
  T03  Triton's tutorial 03-matrix-multiplication.py, its FP8 list (what this row autotuned over before issue 43)
  T09  Triton's tutorial 09-persistent-matmul.py: BM 128, BN 128/256, BK 64/128, 3-4 stages, 4/8 warps; its
       earlier FP8 setting 128x256x128, 4 stages, 8 warps
  IND  PyTorch inductor's scaled_mm_configs and persistent_mm_configs (torch/_inductor, template heuristics)
  FBG  FBGEMM's Triton FP8 GEMM (fp8_gemm.py): 128x128x128, 3 stages, 8 warps added for its no-fast-accumulation
       kernel
None of them was measured here (no GPU). BLOCK_K is at most 128 in every entry: under a strict contract one
tl.dot is one promotion interval (max_num_imprecise_acc = BLOCK_K, triton_fp8_kernels.py), and the strict bound
models promotion every 128 of K (docs/fp8.md). Under promotion Triton holds the wgmma partial sums beside the
FP32 accumulator, so the 8-warp 128x128 tiles (64 sums per thread, 128 with partials) are in the list beside the
fast-accumulation favourites (128x256 with 8 warps: 128 sums per thread); the race decides per contract.
"""

from __future__ import annotations

from dataclasses import dataclass

SMEM_LIMIT = 232448  # bytes of shared memory a block may opt into on sm_90
MAX_BLOCK_K = 128  # a strict contract's promotion interval (one tl.dot)
SOURCES = {
    "T03": "Triton tutorial 03-matrix-multiplication (FP8 list)",
    "T09": "Triton tutorial 09-persistent-matmul",
    "IND": "PyTorch inductor scaled_mm / persistent_mm configs",
    "FBG": "FBGEMM Triton fp8_gemm (no-fast-accumulation config)",
}


@dataclass(frozen=True)
class TritonFp8Config:
    """One tile configuration: tl.dot shapes BLOCK_M x BLOCK_N x BLOCK_K, num_warps, num_stages, GROUP_M."""

    block_m: int
    block_n: int
    block_k: int
    warps: int
    stages: int
    group_m: int = 8
    sources: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """Its identity in specs, row names and the pick cache: '128x256x128_w8_s4_g8'."""
        return f"{self.block_m}x{self.block_n}x{self.block_k}_w{self.warps}_s{self.stages}_g{self.group_m}"

    def smem_bytes(self) -> int:
        """Shared memory of the operand ring: one byte per FP8 element, A and B tiles per stage."""
        return self.stages * (self.block_m + self.block_n) * self.block_k

    def accumulators_per_thread(self) -> int:
        """FP32 sums each thread holds (twice that under promotion: the partials beside them)."""
        return self.block_m * self.block_n // (32 * self.warps)

    def problems(self) -> list[str]:
        """Why this configuration cannot be compiled or cannot honour a strict contract ([] when it can)."""
        out = []
        for dim, v in (("BLOCK_M", self.block_m), ("BLOCK_N", self.block_n)):
            if v < 16 or v > 256 or v & (v - 1):
                out.append(f"{dim}={v} must be a power of two in 16..256")
        if self.block_k not in (32, 64, 128):
            out.append(f"BLOCK_K={self.block_k} must be 32, 64 or 128: whole k32 FP8 wgmma steps (a power of two for "
                       f"tl.arange), and at most "
                       f"{MAX_BLOCK_K} so that a strict contract's promotion interval (one tl.dot) is 128 of K or less")
        if self.warps not in (4, 8):
            out.append(f"num_warps={self.warps} must be 4 or 8 (whole warpgroups for wgmma)")
        if not 2 <= self.stages <= 6:
            out.append(f"num_stages={self.stages} must be 2..6")
        if self.group_m < 1:
            out.append(f"GROUP_M={self.group_m} must be at least 1")
        if self.smem_bytes() > SMEM_LIMIT:
            out.append(f"{self.stages} stages of {self.block_m}x{self.block_n}x{self.block_k} FP8 need "
                       f"{self.smem_bytes():,} bytes of shared memory; sm_90 allows {SMEM_LIMIT:,}")
        if self.accumulators_per_thread() > 128:
            out.append(f"{self.accumulators_per_thread()} FP32 sums per thread (more than 128: it would spill); use "
                       f"8 warps or a smaller tile")
        return out


def _c(bm, bn, bk, warps, stages, *sources):
    return TritonFp8Config(bm, bn, bk, warps, stages, 8, sources)


# Ordered as Triton's autotuner and the race list them; every GROUP_M is 8 (every source uses 8).
CONFIGS: tuple[TritonFp8Config, ...] = (
    _c(128, 256, 128, 8, 3, "T03", "IND"),
    _c(256, 128, 128, 8, 3, "T03", "IND"),
    _c(256, 64, 128, 4, 4, "T03", "IND"),
    _c(64, 256, 128, 4, 4, "T03", "IND"),
    _c(128, 128, 128, 4, 4, "T03", "IND"),
    _c(128, 64, 64, 4, 4, "T03", "IND"),
    _c(64, 128, 64, 4, 4, "T03", "IND"),
    _c(128, 32, 64, 4, 4, "T03", "IND"),
    _c(128, 256, 128, 8, 4, "T09"),
    _c(128, 256, 64, 8, 4, "T09"),
    _c(128, 256, 64, 8, 3, "T09", "IND"),
    _c(128, 128, 128, 8, 4, "T09"),
    _c(128, 128, 128, 8, 3, "T09", "IND", "FBG"),
    _c(128, 128, 128, 4, 3, "T09", "IND"),
    _c(256, 128, 64, 8, 4, "IND"),
    _c(128, 128, 64, 8, 4, "T09", "IND"),
)
BY_NAME: dict[str, TritonFp8Config] = {c.name: c for c in CONFIGS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
