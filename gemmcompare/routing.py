"""Routing draws: the per-expert token counts of a mixture-of-experts layer, drawn reproducibly from a seed.

A draw is `tokens` tokens, each routed to `top_k` distinct experts of `experts`; expert e's group M is the number
of (token, expert) assignments it receives, so the counts sum to tokens * top_k and an expert may get none.

Distributions (the weight each expert has when a token picks):
  balanced   every expert alike (uniform; the counts still vary, as a real balanced router's do);
  zipf s     expert weights proportional to 1 / rank^s, the ranks a seeded permutation of 1..experts (so the
             hot experts are not always the first ones), s > 0: a skewed router, as measured MoE layers are.

Each token draws its top_k experts without replacement in proportion to the weights, by an exponential race
(the top_k smallest E_e / weight_e with E_e standard exponential; the Gumbel-top-k rule in other words: the
same law as drawing one expert after another with the chosen ones removed). numpy's Generator (PCG64) seeded with `seed` makes every draw reproducible: the same
routing gives the same counts on every machine; tokens are drawn in fixed chunks, so memory stays bounded
and the counts do not depend on anything but the routing itself.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

DISTRIBUTIONS = ("balanced", "zipf")
CHUNK_TOKENS = 2048  # tokens drawn at once: 2048 x experts values (16 MB at 1024 experts; stays in cache)


@dataclass(frozen=True, order=True)
class Routing:
    tokens: int
    top_k: int
    experts: int
    distribution: str = "balanced"  # one of DISTRIBUTIONS
    exponent: float = 0.0  # zipf's s (> 0); 0 for balanced
    seed: int = 0

    def __post_init__(self):
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"unknown routing distribution {self.distribution!r}; expected one of {DISTRIBUTIONS}")
        if self.tokens < 0 or self.experts < 1 or not 1 <= self.top_k <= self.experts:
            raise ValueError(f"routing needs tokens >= 0 and 1 <= top_k <= experts, got tokens={self.tokens}, "
                             f"top_k={self.top_k}, experts={self.experts}")
        if self.distribution == "zipf" and not self.exponent > 0:
            raise ValueError(f"a zipf exponent must be above 0, got {self.exponent}")

    @property
    def assignments(self) -> int:
        """(token, expert) pairs: the sum of the group Ms."""
        return self.tokens * self.top_k

    @property
    def name(self) -> str:
        """The distribution as a label writes it: 'balanced' or 'zipf1.2'."""
        return "balanced" if self.distribution == "balanced" else f"zipf{self.exponent:g}"

    def weights(self, rng):
        """The experts' (unnormalized) weights; draws the zipf rank permutation from `rng`."""
        import numpy as np

        if self.distribution == "balanced":
            return np.ones(self.experts)
        ranks = rng.permutation(self.experts) + 1  # expert e has rank ranks[e]
        return 1.0 / ranks.astype(np.float64) ** self.exponent

    def draw(self) -> tuple[int, ...]:
        """Tokens routed to each expert (a tuple of `experts` counts summing to tokens * top_k)."""
        return _draw(self)

    def as_dict(self) -> dict:
        return {"tokens": self.tokens, "top_k": self.top_k, "experts": self.experts,
                "distribution": self.distribution, "exponent": self.exponent, "seed": self.seed}


@functools.lru_cache(maxsize=256)  # a spec draws one routing for several shapes (an MoE layer's up and down GEMMs)
def _draw(r: Routing) -> tuple[int, ...]:
    import numpy as np

    rng = np.random.default_rng(r.seed)
    inverse = 1.0 / r.weights(rng)
    counts = np.zeros(r.experts, dtype=np.int64)
    for start in range(0, r.tokens, CHUNK_TOKENS):
        rows = min(CHUNK_TOKENS, r.tokens - start)
        race = rng.standard_exponential(size=(rows, r.experts)) * inverse[None, :]
        # each token's top_k smallest: at or below its top_k-th smallest (ties have probability zero)
        kth = np.partition(race, r.top_k - 1, axis=1)[:, r.top_k - 1: r.top_k]
        counts += (race <= kth).sum(axis=0)
    return tuple(int(c) for c in counts)
