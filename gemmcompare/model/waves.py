"""Tile quantization: how many waves of CTAs a tiled GEMM needs, and what a partial last wave costs.

A data-parallel GEMM launches one CTA per output tile (times split-K slices, times batch). The GPU runs
SMs x CTAs-per-SM of them at a time; the last wave is partial when the tile count is not a multiple of
that. Every wave takes as long as a full one (each CTA does the same work), so the best the kernel can do
is tiles / (waves_rounded_up x CTAs per wave) of the machine: 4096^3 with 128x256 tiles on 132 SMs is 512
tiles, 3.88 waves, run as 4: 97% at most.

A persistent kernel (one CTA per SM walking tiles, as CUTLASS 3's persistent scheduler does) has the
same quantization per SM: some workers get ceil(tiles / workers) tiles, and the run lasts as long as they.

The wave bound assumes each resident CTA runs at 1/CTAs-per-SM of its SM even when the last wave leaves it
alone there. With the hardware scheduler (not persistent), CTAs that share an SM share its rate and a
lone CTA may use more of it, so the rigorous bound is per SM: by pigeonhole some SM runs at least
ceil(tiles / SMs) tiles (`tiles_on_busiest_sm`, `sm_efficiency`). With one CTA per SM the two coincide.
Stream-K spreads the K loop of the leftover tiles over every worker and removes the quantization (its
fix-up cost is not modelled). Thread-block clusters round the grid up to whole clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class WaveQuantization:
    """Tiles, waves and the efficiency bound of one launch."""

    tiles_m: int  # after rounding up to whole clusters
    tiles_n: int
    batch: int
    split_k: int
    ctas: int  # units of work: tiles_m * tiles_n * split_k * batch
    sm_count: int
    ctas_per_sm: int
    ctas_per_wave: int
    persistent: bool
    stream_k: bool

    @property
    def waves(self) -> float:
        """Fractional waves: ctas / ctas_per_wave."""
        return self.ctas / self.ctas_per_wave

    @property
    def wave_count(self) -> int:
        """Waves actually run (the last one possibly partial)."""
        return math.ceil(self.ctas / self.ctas_per_wave)

    @property
    def full_waves(self) -> int:
        return self.ctas // self.ctas_per_wave

    @property
    def tail_ctas(self) -> int:
        """CTAs in the partial last wave (0 when the last wave is full)."""
        return self.ctas % self.ctas_per_wave

    @property
    def tail_fill(self) -> float:
        """Busy fraction of the last wave (1.0 when it is full)."""
        return self.tail_ctas / self.ctas_per_wave if self.tail_ctas else 1.0

    @property
    def efficiency(self) -> float:
        """Upper bound on the machine fraction the launch can use: waves / waves rounded up (1 for stream-K)."""
        if self.stream_k:
            return 1.0
        return self.waves / self.wave_count

    @property
    def tiles_on_busiest_sm(self) -> float:
        """Tiles the busiest SM runs: ceil(ctas / SMs) under the hardware scheduler; CTAs-per-SM x
        ceil(ctas / workers) for a persistent kernel (each worker walks its share at 1/CTAs-per-SM of the
        SM); ctas / SMs (fractional) for stream-K."""
        if self.stream_k:
            return self.ctas / self.sm_count
        if self.persistent:
            return self.ctas_per_sm * self.wave_count
        return math.ceil(self.ctas / self.sm_count)

    @property
    def sm_efficiency(self) -> float:
        """Mean tiles per SM over the busiest SM's: the per-SM quantization bound."""
        return self.ctas / self.sm_count / self.tiles_on_busiest_sm

    @property
    def max_tiles_per_worker(self) -> int:
        """For a persistent kernel: the most tiles one worker CTA walks (= wave_count)."""
        return self.wave_count


def tile_grid(m: int, n: int, bm: int, bn: int, cluster: tuple[int, int] = (1, 1)) -> tuple[int, int]:
    """(tiles along M, tiles along N), each rounded up to a whole number of clusters."""
    cm, cn = cluster
    tm, tn = math.ceil(m / bm), math.ceil(n / bn)
    return math.ceil(tm / cm) * cm, math.ceil(tn / cn) * cn


def wave_quantization(m: int, n: int, bm: int, bn: int, sm_count: int, ctas_per_sm: int = 1, *, batch: int = 1,
                      split_k: int = 1, cluster: tuple[int, int] = (1, 1), persistent: bool = False,
                      stream_k: bool = False) -> WaveQuantization:
    """The wave quantization of an m x n output tiled by bm x bn on `sm_count` SMs holding `ctas_per_sm` each.
    A cluster's CTAs are co-scheduled, so the CTAs of a wave are rounded down to whole clusters."""
    if sm_count < 1 or ctas_per_sm < 1:
        raise ValueError("waves need at least one SM and one CTA per SM (a kernel that fits no CTA never runs)")
    tm, tn = tile_grid(m, n, bm, bn, cluster)
    cluster_size = cluster[0] * cluster[1]
    per_wave = (sm_count * ctas_per_sm) // cluster_size * cluster_size
    if per_wave < 1:
        raise ValueError(f"a cluster of {cluster_size} CTAs does not fit {sm_count} SMs x {ctas_per_sm}")
    return WaveQuantization(
        tiles_m=tm, tiles_n=tn, batch=batch, split_k=split_k, ctas=tm * tn * split_k * batch,
        sm_count=sm_count, ctas_per_sm=ctas_per_sm, ctas_per_wave=per_wave, persistent=persistent,
        stream_k=stream_k,
    )
