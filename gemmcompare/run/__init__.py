"""Measuring: the parent process of a run (parent), the measuring worker process it starts (worker), the
typed messages between them (messages), and, inside the worker, the per-problem executor (executor) with
the inputs it draws (inputs).

Called, this package runs a spec from Python: `gemmcompare.run(spec, shapes=..., only=...)` is
gemmcompare.api.run (rows and receipt, measured as `gemmcompare run` measures them).
"""

from ..api import callable_module

callable_module(__name__, "run")
