"""Experiment specs: YAML (safe loading only) -> a frozen, fully validated Experiment.

Every problem found is reported at once, each naming the file, the key path and the line, saying what
was expected, and suggesting the nearest valid name for a typo. Nothing runs until the whole spec is
valid.
"""

from ..errors import SpecError  # noqa: F401
from .experiment import Experiment, ProblemEntry, ReportSettings, count_rows  # noqa: F401
from .issues import MAX_MESSAGE_CHARS, SpecIssue, nearest, printable  # noqa: F401
from .checker import MAX_DIM  # noqa: F401
from .problem_entries import DIMS, PROBLEM_KEYS, SWEEP_ITEM_KEYS  # noqa: F401
from .contract_entries import CONTRACT_KEYS  # noqa: F401
from .implementation_entries import TOP_KEYS, TUNE_KEY, load_spec, parse_spec  # noqa: F401
from .settings import CORRECTNESS_KEYS, PLOTS, TIMING_KEYS  # noqa: F401
