"""Experiment specs: YAML (safe loading only) -> a frozen, fully validated Experiment.

Every problem found is reported at once, each naming the file, the key path and the line, saying what
was expected, and suggesting the nearest valid name for a typo. Nothing runs until the whole spec is
valid.

  load.py                    load_spec, parse_spec: the file, its YAML, the top-level keys, then each section
  experiment.py              what a valid spec becomes: Experiment, ProblemEntry, ReportSettings, count_rows
  issues.py                  SpecIssue (file, key path, line, message, did-you-mean hint), nearest, printable
  checker.py                 the issues collected while walking the spec; the value checks sections share
  yaml_lines.py              safe, bounded YAML, keeping the line of every key path
  problem_entries.py         problems: single problems and sweeps
  contract_entries.py        contracts: built-in names and definitions
  implementation_entries.py  implementations: fixed, parametrized (sweeps, per contract) and tuned entries
  settings.py                correctness, timing and report
"""

from ..errors import SpecError  # noqa: F401
from .load import TOP_KEYS, load_spec, parse_spec  # noqa: F401
from .experiment import Experiment, ProblemEntry, ReportSettings, count_rows  # noqa: F401
from .issues import MAX_MESSAGE_CHARS, SpecIssue, nearest, printable  # noqa: F401
from .checker import MAX_DIM  # noqa: F401
from .problem_entries import DIMS, PROBLEM_KEYS, SWEEP_ITEM_KEYS  # noqa: F401
from .contract_entries import CONTRACT_KEYS  # noqa: F401
from .implementation_entries import TUNE_KEY  # noqa: F401
from .settings import CORRECTNESS_KEYS, PLOTS, TIMING_KEYS  # noqa: F401
