"""Per-problem picks: an implementation tuned on each problem, measured without the luck of its selection.

A spec asks for it with `tune` on any parametrized family (or `config: auto` for CUTLASS):

    - cutlass: {config: auto}                             # every catalog configuration the contract allows
    - cutlass: {config: auto, template: sm90}             # those of one kernel template
    - cutlass: {tune: {config: [sm90_pp_64x128x64_c1x1, sm80_64x64x64_5st]}}   # a list to choose from
    - mma_sync: {layout: tt, tune: {block: [[128, 128, 32], [128, 256, 64]], stages: [3, 4]}}
    - hopper.best: {tune: auto}                           # the family's own grid (tuned.FAMILY_GRIDS)

Such an entry is one row per problem and contract (`<family>.tuned[...]`), whatever its candidates.
Per group, the worker (runner/executor.py) narrows the candidates with the project's model (select.narrow),
checks each on one fixture (a wrong kernel cannot be picked), times them briefly (select.BRIEF) and picks
the lowest median; the winner is then checked on every fixture and timed with the row's full protocol
on a fresh draw, beside the other rows: its reported samples are not the ones it was picked on
(docs/tuning.md says why that matters). The row's note names the winner and the candidates' brief times;
its timing receipt keeps them (`timing.tuning`). Picks are cached per GPU model, driver, problem,
contract and build (cache.py): a second run reuses them and says so.

Modules: tuned (the implementation and its candidates), select (narrowing and the brief race), cache
(the pick cache, SQLite).
"""
