"""Experiment specs: YAML (safe loading only) -> a frozen, fully validated Experiment.

Every problem found is reported at once, each naming the file, the key path and the line, saying what
was expected, and suggesting the nearest valid name for a typo. Nothing runs until the whole spec is
valid.
"""

from ..errors import SpecError  # noqa: F401
from .implementation_entries import (CONTRACT_KEYS, CORRECTNESS_KEYS, DIMS, MAX_DIM, MAX_MESSAGE_CHARS,  # noqa: F401
                                     PLOTS, PROBLEM_KEYS, SWEEP_ITEM_KEYS, TIMING_KEYS, TOP_KEYS, TUNE_KEY, Experiment,
                                     ProblemEntry, ReportSettings, SpecIssue, count_rows, load_spec, nearest,
                                     parse_spec, printable)
