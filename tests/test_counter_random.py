"""The fixtures' counter-based generator: values that depend on (seed, draw, index) alone."""

from __future__ import annotations

import pytest
import torch

from gemmcompare.contracts import counter_random
from gemmcompare.contracts.counter_random import CounterRandom, mix32


def lowbias32(x: int) -> int:
    """The published hash in plain 32-bit arithmetic, to check the split multiplies against."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def test_mix32_is_lowbias32_without_overflow():
    xs = [0, 1, 2, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xDEADBEEF, 0xFFFFFFFF]
    xs += torch.randint(0, 2**32, (1000,), dtype=torch.int64).tolist()
    got = mix32(torch.tensor(xs, dtype=torch.int64)).tolist()
    assert got == [lowbias32(x) for x in xs]


def test_a_seed_gives_the_same_draws_and_another_seed_does_not():
    first, again, other = CounterRandom(7), CounterRandom(7), CounterRandom(8)
    a = first.uniform((33, 17))
    assert torch.equal(a, again.uniform((33, 17)))
    assert not torch.equal(a, other.uniform((33, 17)))
    # the second draw of a generator is a new stream, not the first again
    assert not torch.equal(first.uniform((33, 17)), a)


def test_values_depend_on_the_index_not_on_the_chunking(monkeypatch):
    whole = CounterRandom(3).uniform((100, 37))
    monkeypatch.setattr(counter_random, "CHUNK", 64)  # 3700 elements in 58 chunks
    assert torch.equal(CounterRandom(3).uniform((100, 37)), whole)
    # a draw's values are one flat sequence laid into the shape: a smaller draw is its prefix
    assert torch.equal(CounterRandom(3).uniform((50, 37)), whole[:50])


def test_uniform_is_in_range_on_the_torch_rand_grid_and_flat():
    u = CounterRandom(11).uniform((512, 512))
    assert u.dtype == torch.float32 and u.min() >= 0 and u.max() < 1
    assert torch.equal(u * 2**24, (u * 2**24).round())
    counts = torch.histc(u, bins=16, min=0, max=1)
    expected = u.numel() / 16
    assert ((counts - expected).abs() < 5 * expected**0.5).all(), counts  # 5 sigma per bin
    assert abs(float(u.double().mean()) - 0.5) < 0.002


def test_integers_cover_their_range_evenly():
    x = CounterRandom(5).integers(-2, 3, (400, 500))
    assert x.dtype == torch.int64 and set(x.unique().tolist()) == {-2, -1, 0, 1, 2}
    counts = torch.bincount(x.flatten() + 2).double()
    assert ((counts / x.numel() - 0.2).abs() < 0.003).all(), counts


def test_integers_as_floats_are_the_same_integers():
    assert torch.equal(CounterRandom(5).integers(-2, 3, (30, 40), torch.float32),
                       CounterRandom(5).integers(-2, 3, (30, 40)).float())


def test_normal_has_mean_zero_and_unit_variance():
    z = CounterRandom(9).normal((600, 600)).double()
    assert torch.isfinite(z).all()
    assert abs(float(z.mean())) < 0.01 and abs(float(z.var()) - 1) < 0.01
    assert abs(float((z.abs() < 1.0).double().mean()) - 0.6827) < 0.005


def test_neighbouring_elements_and_streams_are_uncorrelated():
    g = CounterRandom(1)
    u, v = g.uniform((1 << 18,)).double(), g.uniform((1 << 18,)).double()
    assert abs(float(torch.corrcoef(torch.stack([u[:-1], u[1:]]))[0, 1])) < 0.01
    assert abs(float(torch.corrcoef(torch.stack([u, v]))[0, 1])) < 0.01


@pytest.mark.parametrize("seed", [0, 2**31 - 1, 2**40 + 5])
def test_large_seeds_are_fine(seed):
    assert CounterRandom(seed).uniform((4, 4)).shape == (4, 4)


@pytest.mark.gpu
def test_the_gpu_draws_the_cpus_bits():
    on_gpu, on_cpu = CounterRandom(42, "cuda"), CounterRandom(42, "cpu")
    for _ in range(2):
        assert torch.equal(on_gpu.uniform((1000, 333)).cpu(), on_cpu.uniform((1000, 333)))
    assert torch.equal(on_gpu.integers(-2, 3, (77, 5)).cpu(), on_cpu.integers(-2, 3, (77, 5)))
    z_gpu, z_cpu = on_gpu.normal((300, 300)).cpu(), on_cpu.normal((300, 300))
    assert (z_gpu != z_cpu).sum() <= 3 and torch.allclose(z_gpu, z_cpu, rtol=1e-6, atol=0)


def test_the_fused_hash_source_is_the_int64_hash(tmp_path):
    """COUNTER_HASH_CUDA (the GPU's fused kernel) compiled for the host as plain C++ gives counter_hash_int64's
    bits, at indices on both sides of 2^32 and keys at the ends of their range."""
    import shutil
    import subprocess

    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    index = torch.cat([torch.arange(0, 300), torch.arange(2**32 - 300, 2**32 + 300), torch.tensor([2**40 + 7])])
    keys = [(0, 0), (0xFFFFFFFF, 0xFFFFFFFF), (0x9E3779B9, 0x7F4A7C15)]
    source = tmp_path / "hash.cpp"
    source.write_text("#include <cstdio>\n" + counter_random.COUNTER_HASH_CUDA
                      + "int main() { long long i, k1, k2;\n"
                        "  while (std::scanf(\"%lld %lld %lld\", &i, &k1, &k2) == 3)\n"
                        "    std::printf(\"%lld\\n\", gemmcompare_counter_hash<long long>(i, k1, k2));\n}\n")
    subprocess.run([compiler, "-O2", "-o", str(tmp_path / "hash"), str(source)], check=True)
    lines = "".join(f"{i} {k1} {k2}\n" for k1, k2 in keys for i in index.tolist())
    got = [int(v) for v in subprocess.run([str(tmp_path / "hash")], input=lines, capture_output=True, text=True,
                                          check=True).stdout.split()]
    want = [v for k1, k2 in keys for v in counter_random.counter_hash_int64(index, k1, k2).tolist()]
    assert got == want


def test_jiterator_parses_the_fused_hash_source():
    """jiterator takes its source as one templated function (a regular expression from the start of the text);
    a source it cannot parse would leave every GPU draw on the int64 pieces."""
    jiterator = pytest.importorskip("torch.cuda.jiterator")
    assert jiterator._CodeParser(counter_random.COUNTER_HASH_CUDA).function_name == "gemmcompare_counter_hash"


@pytest.mark.gpu
def test_the_gpu_draws_with_the_fused_hash_and_its_bits_are_the_int64_ones():
    index = torch.cat([torch.arange(0, 1 << 20), torch.arange(2**32 - (1 << 16), 2**32 + (1 << 16))]).cuda()
    assert counter_random._fused_kernel(index.device) is not None, "the fused hash is not in use on this GPU"
    for k1, k2 in [(1, 2), (0xFFFFFFFF, 0), (0xDEADBEEF, 0xFFFFFFFF)]:
        assert torch.equal(counter_random.counter_hash(index, k1, k2), counter_random.counter_hash_int64(index, k1, k2))
