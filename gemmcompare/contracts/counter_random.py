"""The fixtures' random numbers: a counter-based generator, drawn where the tensors live.

Each value is a pure function of (seed, stream, element index): a 32-bit integer hash, so the same seed
gives the same bits on the CPU and on any GPU, whatever its SM count or launch configuration (torch's own
CUDA generator is neither: its values depend on the grid it picks for the device), and at no cost worth
timing (about a millisecond for a 4096 x 4096 matrix on an H200, where torch's CPU generator took a
second for the A, B and C of one fixture and the copy to the device). `stream` keeps each call's values
apart: a `CounterRandom` numbers its draws in order, as a generator object's state would.

Only integer arithmetic that cannot overflow int64 is used (32-bit products split into 16-bit halves),
so the bits are defined in every backend. The uniform values are multiples of 2^-24 in [0, 1), as
torch.rand's are; normal values come from Box-Muller in FP64 (bit-equal across backends except, rarely,
in the last bit, where the FP64 logarithm or cosine of two math libraries differs).

    rng = CounterRandom(seed=7, device="cuda")
    a = rng.uniform((m, k)) * 2 - 1      # float32, [-1, 1)
    signs = rng.integers(0, 2, (m, 1))   # int64 in [0, 2)
"""

from __future__ import annotations

import math

import torch

MASK32 = 0xFFFFFFFF
CHUNK = 1 << 24  # elements hashed at once: bounds the int64 temporaries (8 bytes each) for huge matrices


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """(x * c) mod 2^32 for x in [0, 2^32): the product's halves stay below 2^49."""
    lo, hi = x & 0xFFFF, x >> 16
    return (lo * c + ((hi * (c & 0xFFFF)) << 16)) & MASK32


def mix32(x: torch.Tensor) -> torch.Tensor:
    """A bijective 32-bit finalizer with full avalanche ('lowbias32', C. Wellons' hash-prospector)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def _mix32_int(x: int) -> int:
    """mix32 of one Python int (the keys)."""
    return int(mix32(torch.tensor([x & MASK32], dtype=torch.int64))[0])


class CounterRandom:
    """Random tensors on `device` from `seed`: the n-th draw of a CounterRandom(seed) is the same
    everywhere."""

    def __init__(self, seed: int, device: torch.device | str = "cpu"):
        self.seed = int(seed)
        self.device = torch.device(device)
        self._stream = 0

    def _keys(self) -> tuple[int, int]:
        """The next draw's two 32-bit keys (the draw's number mixed with the seed)."""
        stream, self._stream = self._stream, self._stream + 1
        key1 = _mix32_int(self.seed ^ _mix32_int(stream * 0x9E3779B9 + 0x7F4A7C15))
        return key1, _mix32_int(key1 ^ (self.seed >> 32) ^ 0x2545F491)

    def _draw(self, shape, dtype: torch.dtype, draws: int, values) -> torch.Tensor:
        """A tensor of `shape` whose element i is values(h_1[i], ..., h_draws[i]), h_j[i] the 32-bit hash of i
        under the j-th draw's keys; made a chunk at a time, so no int64 tensor of the whole shape exists."""
        keys = [self._keys() for _ in range(draws)]
        numel = math.prod(shape)
        out = torch.empty(numel, dtype=dtype, device=self.device)
        for start in range(0, numel, CHUNK):
            index = torch.arange(start, min(start + CHUNK, numel), dtype=torch.int64, device=self.device)
            low, high = index & MASK32, index >> 32
            hashes = [mix32(mix32(low ^ k1) ^ ((high + k2) & MASK32)) for k1, k2 in keys]
            out[start:start + index.numel()] = values(*hashes)
        return out.view(shape)

    def uniform(self, shape) -> torch.Tensor:
        """float32 in [0, 1), multiples of 2^-24."""
        return self._draw(shape, torch.float32, 1, lambda h: (h >> 8).to(torch.float32) * 2.0**-24)

    def integers(self, low: int, high: int, shape, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        """Integers in [low, high), as `dtype` (modulo reduction: a bias of at most (high - low) / 2^32)."""
        return self._draw(shape, dtype, 1, lambda h: (h % (high - low) + low).to(dtype))

    def normal(self, shape) -> torch.Tensor:
        """float32 standard normal (Box-Muller on two draws, in FP64)."""
        def box_muller(h1, h2):
            u1 = ((h1 >> 11).to(torch.float64) + 0.5) * 2.0**-21  # in (0, 1): the log stays finite
            u2 = (h2 >> 8).to(torch.float64) * 2.0**-24
            return (torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * math.pi * u2)).to(torch.float32)

        return self._draw(shape, torch.float32, 2, box_muller)
