"""Loading a script of experiments/ (not a package) as a module, for the tests of its CPU-side logic."""

import importlib.util
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def load_script(filename: str) -> ModuleType:
    path = EXPERIMENTS / filename
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
