"""The tuned implementation: one row per (problem, contract) standing for a set of candidates, and the
pick that stands in for it once a group has chosen."""

from __future__ import annotations

from typing import Any

from ..implementations.base import Implementation, Ok, Skip, format_params
from ..implementations.triton_fp8_configs import NAMES as TRITON_FP8_CONFIGS

# `tune: auto`: what each hand-written family varies when it is tuned. Kept small: every point is a build.
_HOPPER_BLOCKS = [(128, 128, 64), (128, 256, 64), (64, 128, 64), (64, 256, 64)]
FAMILY_GRIDS: dict[str, dict[str, list]] = {
    "mma_sync": {"block": [(128, 128, 32), (128, 256, 32), (64, 128, 64), (64, 64, 64)], "stages": [3, 4]},
    # decode (M <= 16, memory-bound): A's re-reads against CTAs per SM (cols), loads in flight per thread (unroll),
    # and how many cluster CTAs split K
    "decode": {"cols": [16, 32, 64], "unroll": [1, 2], "splits": [1, 2, 4, 8]},
    # gemv (M <= 4): CTA size (how short the last wave is) and loads in flight per lane
    "gemv": {"warps": [2, 4, 8], "unroll": [4, 8, 16]},
    "hopper.wgmma_tma": {"block": _HOPPER_BLOCKS},  # one stage, one consumer: the tile is all it has
    "hopper.pipelined": {"block": _HOPPER_BLOCKS, "stages": [3, 4]},
    # two consumer warpgroups split the tile's M: 64-row tiles take one
    **{f"hopper.{step}": {"block": _HOPPER_BLOCKS, "consumers": [1, 2]}
       for step in ("warp_specialized", "persistent", "cluster", "best")},
    # skinny M, long K: the tile sets how many units there are to split; the split itself is chosen per problem
    # (splits 0: one wave of tiles x slices), and stages keep B streaming (10 of the 20 points cannot be built:
    # two consumers need 128 rows, and the wide tiles run out of accumulators or, at 6 stages, shared memory)
    # 64x64 (one consumer) for the M = 64-128, N = 4096-6144 decode problems, where 64x128 tiles number 32-48
    # and each is split 3-4 ways: twice the tiles, half the slices, half the f32 partial planes to write and
    # reduce (llm-shapes/study-1c2b5a0: split_k read 80-82% there, its weakest)
    "hopper.split_k": {"block": _HOPPER_BLOCKS + [(64, 64, 64)], "consumers": [1, 2], "stages": [4, 6]},
    # FP8: BK is 128 and the promotion registers leave BN <= 128 with the overlapped promotion; 128x192 without it
    # read 43-47% of cuBLASLt at 4096^3 where 128x128 read 52% (fp8/hopper-fp8-1c2b5a0), so the promoting tile is
    # fixed and stages (latency hiding against shared memory) and overlap vary. accumulation fast (`_fastacc`
    # contracts only: a SKIP candidate under strict ones, never built there) has one register set, so 128x256 fits
    # (4 stages of it and the TMA-store epilogue's buffers in shared memory), the tile CUTLASS's and cuBLASLt's fast
    # kernels win with; of the 24 points 10 can be built (6 promote, 4 fast), the rest are SKIPs with the reason
    # (128x256 promoting, fast with overlap, 5+ stages of 128x256). 7 stages of 128x128 no longer fit beside the
    # epilogue's buffers.
    "hopper.fp8": {"block": [(128, 128, 128), (128, 256, 128)], "stages": [4, 5, 6], "overlap": [0, 1],
                   "accumulation": ["promote", "fast"]},
    # the Triton FP8 GEMM's configuration list (implementations/triton_fp8_configs.py, each entry with its source):
    # raced by the harness (its L2 policy, its timing, each candidate checked first) instead of Triton's autotuner
    "library.triton_fp8": {"config": list(TRITON_FP8_CONFIGS)},
    # grouped (MoE): 64-row tiles for decode's groups of a few rows, 128-row ones for prefill's (5 of the 8 points
    # can be built: two consumers need 128 rows, and 128x256 with one consumer runs out of accumulators)
    "hopper.grouped": {"block": _HOPPER_BLOCKS, "consumers": [1, 2]},
    # grouped FP8 (block scales, BK 128): 64-row tiles for decode's few tokens per expert, 128-row ones for prefill,
    # and 128x256 promoted per 128-column half for the big experts (a third less A and B loaded per product: at
    # Mixtral the 128-column tiles read 76.5-83.7% of cuBLASLt's loop, moe-shapes/h100/fp8-6ca041b); stages against
    # shared memory and the overlapped promotion. 9 of the 24 points can be built: two consumers need 128 rows,
    # 128x128 with one consumer holds 2 x 128 sums and partials per thread, past the 192 registers of fp8.cuh, and
    # 128x256 takes two consumers, 4 stages and no overlap.
    "hopper.grouped_fp8": {"block": [(128, 128, 128), (64, 128, 128), (128, 256, 128)], "consumers": [1, 2],
                           "stages": [4, 6], "overlap": [0, 1]},
    # prefill with a part-empty last wave: the tile sets the wave count (and so how empty the last wave is); the
    # schedule itself is the auto rule, per problem (hybrid under 80% fill). The same 5 buildable points as best.
    "hopper.stream_k": {"block": _HOPPER_BLOCKS, "consumers": [1, 2]},
}

MAX_CANDIDATES = 64  # built and checked before the model narrows them: each is a compile


class TunedImplementation(Implementation):
    """A family's candidates (each an Implementation with its own build), tuned per problem.

    `params` are the entry's fixed parameters, `tuned` the names of those that vary, `grid_text` how the
    spec gave the candidates (for the name: equal names mean equal candidate sets in one spec)."""

    def __init__(self, family: str, params: dict[str, Any], tuned: tuple[str, ...], grid_text: str,
                 candidates: list[Implementation]):
        self.family = family
        shown = {k: v for k, v in params.items() if k not in tuned and k != "tune"}
        super().__init__("tuned", {**shown, "tune": grid_text})
        self.tuned = tuned
        self.candidates = candidates
        # grouped problems reach it when a candidate runs them (Implementation.admits asks before supports)
        self.takes_grouped = any(c.takes_grouped for c in candidates)
        self.grouped_fp8 = any(c.grouped_fp8 for c in candidates)
        self.description = f"tuned per problem over {len(candidates)} candidates ({', '.join(tuned)})"

    @property
    def name(self) -> str:
        return f"{self.family}.tuned[{format_params(self.params)}]"

    def supports(self, problem, contract):
        return self._any(lambda c: c.admits(problem, contract))  # admits: a dense-only candidate SKIPs grouped ones

    def check(self, problem, contract, device):
        return self._any(lambda c: c.check(problem, contract, device))

    def supports_device(self, device):
        return self._any(lambda c: c.supports_device(device))

    def _any(self, test) -> Ok | Skip:
        """Ok when a candidate passes `test`; else a SKIP listing the distinct reasons (the first few)."""
        reasons: dict[str, None] = {}
        for c in self.candidates:
            s = test(c)
            if s:
                return Ok()
            reasons[s.reason] = None
        if not self.candidates:
            return Skip("no candidate to tune over")
        listed = list(reasons)
        more = f" (and {len(listed) - 3} other reasons)" if len(listed) > 3 else ""
        return Skip(f"none of the {len(self.candidates)} candidates can run it: " + "; ".join(listed[:3]) + more)

    def prepare(self, problem, contract, operands, extension):  # pragma: no cover - the pick prepares
        raise RuntimeError(f"{self.name}: a tuned row runs its pick (tuning.tuned.Picked), never itself")


class Picked(Implementation):
    """The winner of a tuned row for one group, under the tuned row's name: it prepares, launches and is
    described as the winner; its build is the winner's (`build_name`)."""

    def __init__(self, tuned: TunedImplementation, winner: Implementation, tuning: dict[str, Any]):
        self.family = tuned.family
        super().__init__(tuned.variant, tuned.params)
        self.tuned, self.winner, self.tuning = tuned, winner, tuning
        self.derived_for = tuned.derived_for
        for attr in ("min_cc", "arch_specific", "kernel_filter", "description", "takes_grouped", "grouped_fp8"):
            setattr(self, attr, getattr(winner, attr))

    @property
    def name(self) -> str:
        return self.tuned.name

    @property
    def build_name(self) -> str:
        return self.winner.name

    def kernel_filter_for(self, contract) -> str:
        return self.winner.kernel_filter_for(contract)

    def supports(self, problem, contract):
        return self.winner.supports(problem, contract)

    def supports_device(self, device):
        return self.winner.supports_device(device)

    def dynamic_smem_bytes(self):
        return self.winner.dynamic_smem_bytes()

    def prepare(self, problem, contract, operands, extension):
        return self.winner.prepare(problem, contract, operands, extension)


def build_name(impl: Implementation) -> str:
    """Under which name the experiment's builds hold `impl`'s extension."""
    return getattr(impl, "build_name", impl.name)


def with_candidates(impls) -> list[Implementation]:
    """The implementations, a tuned one replaced by its candidates (what the builder builds)."""
    out: dict[str, Implementation] = {}
    for impl in impls:
        for one in getattr(impl, "candidates", None) or [impl]:
            if impl is not one:
                one.derived_for = impl.derived_for  # built where the tuned row is planned
            out.setdefault(one.name, one)
    return list(out.values())


def auto_grid(family: str, params: dict[str, Any]) -> dict[str, list] | None:
    """What `tune: auto` (or CUTLASS's `config: auto`) varies for `family`: every catalog configuration
    (of the entry's kernel template, when it names one) for cutlass and cute, FAMILY_GRIDS otherwise; None
    for a family without one. Grouped configurations (sm90_grouped) only when their template is named: they
    run grouped problems only, so among a dense problem's candidates each would be a build and a SKIP."""
    if family in ("cutlass", "cute"):
        from ..cutlass.catalog import catalog

        template = "cute_sm80" if family == "cute" else params.get("template") or params.get("family")
        names = sorted(n for n, e in catalog().items()
                       if e.config.TEMPLATE == template or (template is None and not e.config.GROUPED))
        return {"config": names}
    grid = FAMILY_GRIDS.get(family)
    return {k: list(v) for k, v in grid.items()} if grid else None
