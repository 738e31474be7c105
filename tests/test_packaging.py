"""setup.py's lower bounds are the releases CI tests as the floor (.ci/floor.txt): the two lists cannot drift."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_requirements() -> dict[str, str]:
    """Every `name>=version` of setup.py's install_requires and extras_require, read from its syntax tree."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup")
    found = {}
    for kw in call.keywords:
        if kw.arg in ("install_requires", "extras_require"):
            for node in ast.walk(kw.value):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.match(r"^[A-Za-z]", node.value):
                    m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:>=([0-9][0-9A-Za-z.]*))?", node.value)
                    if m and node.value not in ("test", "cluster", "heuristics"):
                        found[m.group(1).lower()] = m.group(2)
    return found


def _floor() -> dict[str, str]:
    pins = {}
    for line in (ROOT / ".ci" / "floor.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.lower()] = version
    return pins


def test_every_lower_bound_is_the_floor_ci_tests():
    declared, floor = _setup_requirements(), _floor()
    bounded = {name: v for name, v in declared.items() if v is not None}
    assert bounded == {name: floor[name] for name in bounded if name in floor}, (bounded, floor)
    assert set(floor) <= set(bounded), f"pinned in .ci/floor.txt but unbounded in setup.py: {set(floor) - set(bounded)}"
    assert all(v is not None for v in declared.values()), f"unbounded in setup.py: {declared}"  # CI tests each floor
