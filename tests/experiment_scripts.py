"""Loading a script of experiments/ (not a package) as a module, for the tests of its CPU-side logic; and the
committed specs (every YAML under experiments/ but the copies kept inside receipts)."""

import importlib.util
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def committed_specs() -> list[Path]:
    """Every spec a user or a study runs: experiments/*.yaml, the example folders' and each study's own; not the
    copies inside receipt folders (h200/, h200-*/)."""
    return sorted(p for p in EXPERIMENTS.rglob("*.yaml")
                  if not any(part.startswith("h200") for part in p.relative_to(EXPERIMENTS).parts))


def load_script(relative: str) -> ModuleType:
    """relative: the script's path under experiments/, e.g. 'studies/llm-shapes/llm_shapes_picks.py'."""
    path = EXPERIMENTS / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
