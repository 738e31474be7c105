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
in the last bit, where the FP64 logarithm or cosine of two math libraries differs). On a GPU the hash is one
fused kernel (COUNTER_HASH_CUDA) that has matched the int64 pieces on that device before it is used.

    rng = CounterRandom(seed=7, device="cuda")
    a = rng.uniform((m, k)) * 2 - 1      # float32, [-1, 1)
    signs = rng.integers(0, 2, (m, 1))   # int64 in [0, 2)
"""

from __future__ import annotations

import math
import warnings

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


def counter_hash_int64(index: torch.Tensor, key1: int, key2: int) -> torch.Tensor:
    """Element i's 32-bit hash under a draw's keys (int64 in [0, 2^32)): mix32 of the index's low half with key1,
    mixed again with its high half plus key2. In int64 pieces (about 45 passes over the chunk), on any device."""
    low, high = index & MASK32, index >> 32
    return mix32(mix32(low ^ key1) ^ ((high + key2) & MASK32))


# The same hash as one CUDA kernel (torch's jiterator, compiled by NVRTC on first use): counter_hash_int64's
# rounds in unsigned 32-bit arithmetic, whose wrap-around C++ defines. The int64 pieces read and write the chunk
# about 45 times, and an MoE layer's fixture draws 256 expert weights of 29M elements each (7.5G values): on an
# H100 the FP8 MoE study's part 1 spent 46.9 s on "inputs+refs" with them (and a second FP64 copy of the operands)
# and 22.8 s with this kernel (moe-shapes/h100/fp8-7b97acd, in git history, as fp8-part0-4e87cbd). One templated
# function: jiterator's parser takes the source as exactly that.
COUNTER_HASH_CUDA = r"""template <typename T> T gemmcompare_counter_hash(T index, T key1, T key2) {
  unsigned long long i = (unsigned long long)index;
  unsigned int x = (unsigned int)(i & 0xFFFFFFFFull) ^ (unsigned int)key1;
  x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
  x ^= (unsigned int)(i >> 32) + (unsigned int)key2;
  x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
  return (T)x;
}
"""
_fused_hash = {}  # device index -> the jitted kernel, or None where it cannot be used (int64 pieces there)


def counter_hash(index: torch.Tensor, key1: int, key2: int) -> torch.Tensor:
    """counter_hash_int64's values: on a CUDA device from the fused kernel once it has matched the int64 pieces
    bit for bit on that device (checked at its first use in the process, over indices that cross 2^32), else
    from the int64 pieces."""
    if index.is_cuda:
        kernel = _fused_kernel(index.device)
        if kernel is not None:
            return _launch(kernel, index, key1, key2)
    return counter_hash_int64(index, key1, key2)


def _launch(kernel, index: torch.Tensor, key1: int, key2: int) -> torch.Tensor:
    keys = torch.tensor([key1, key2], dtype=torch.int64, device=index.device)
    return kernel(index, keys[:1], keys[1:])  # the keys broadcast over the chunk


def _fused_kernel(device: torch.device):
    """The fused kernel for `device`, built and checked once per process; None (and a warning that says why)
    where it cannot be built or disagrees with the int64 pieces: the fixtures' values are the same either way."""
    slot = device.index if device.index is not None else torch.cuda.current_device()
    if slot not in _fused_hash:
        kernel, why = None, ""
        try:
            from torch.cuda import jiterator

            candidate = jiterator._create_jit_fn(COUNTER_HASH_CUDA)
            probe = torch.cat([torch.arange(0, 4096), torch.arange(2**32 - 2048, 2**32 + 2048)]).to(device)
            if all(torch.equal(_launch(candidate, probe, key1, key2), counter_hash_int64(probe, key1, key2))
                   for key1, key2 in ((0, 0), (0x9E3779B9, 0xFFFFFFFF), (0x12345678, 0x7F4A7C15))):
                kernel = candidate
            else:
                why = "it disagrees with the int64 pieces"
        except Exception as e:  # noqa: BLE001  (no jiterator or NVRTC in this torch, a compile error: said, not fatal)
            why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if kernel is None:
            warnings.warn(f"gemmcompare: the fused counter hash is not used on cuda:{slot} ({why}); fixtures are "
                          "drawn with its int64 pieces (the same values, slower)", RuntimeWarning, stacklevel=3)
        _fused_hash[slot] = kernel
    return _fused_hash[slot]


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
            hashes = [counter_hash(index, k1, k2) for k1, k2 in keys]
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
