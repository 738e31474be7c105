"""Measuring: the parent process of a run (parent), the measuring worker process it starts (worker), the
typed messages between them (messages), and, inside the worker, the per-problem executor (executor) with
the inputs it draws (inputs)."""
