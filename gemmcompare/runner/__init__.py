"""Measuring: the parent process of a run (parent), the measuring worker process it starts (worker), the
typed messages between them (messages), and, inside the worker, the per-problem executor (executor) with
the inputs it draws (inputs) and a tuned row's race (picking).

From Python, a spec is run by `gemmcompare.run(spec, shapes=..., only=...)` (gemmcompare.api.run: rows and
receipt, measured as `gemmcompare run` measures them, by this package's Runner).
"""
