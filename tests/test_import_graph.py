"""No import circle inside gemmcompare: every module's imports (at module level and inside functions; not those
under `if TYPE_CHECKING:`) read with ast, relative ones resolved, make a graph between the package's modules
(a package's __init__ is the package's module); no strongly connected component may hold more than one module.

An import of a.b.c also runs the __init__ of a.b and of a, unless the importer is inside them (then they are
running or done already): those packages are edges too. `from a.b import name` is an edge to the module a.b.name
when there is one, else to a.b (the name is the package's)."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "gemmcompare"


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package's __init__ under its own name)."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node, at any depth, except in the body of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """importer -> {imported module: line of the first such import}, between the package's modules."""
    known = modules(root)
    graph: dict[str, dict[str, int]] = {name: {} for name in known}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]  # the package relative imports start from
        inside = set(_ancestors(name)) | {name}

        def add(target: str, line: int) -> None:
            for t in (*_ancestors(target), target):  # running a.b.c runs a's and a.b's __init__ first
                if t in known and t not in inside:
                    graph[name].setdefault(t, line)

        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node.lineno)
                continue
            if node.level:
                if node.level - 1 > len(here) - 1:
                    raise AssertionError(f"{path}:{node.lineno}: a relative import above the package")
                base = here[:len(here) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                add(sub if sub in known else source, node.lineno)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's components, iteratively (the graph may be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    out.append(sorted(component))
    return out


def a_cycle(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """One circle through the component's first module, shortest first (breadth-first inside the component)."""
    members, start = set(component), component[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph[node]:
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if nxt in members and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no circle through {start} in {component}")


def describe(graph: dict[str, dict[str, int]], cycle: list[str], root: Path = ROOT) -> str:
    known = modules(root)
    return " -> ".join(cycle) + "\n" + "\n".join(
        f"    {known[a].relative_to(root)}:{graph[a][b]} imports {b}" for a, b in zip(cycle, cycle[1:]))


def test_the_package_has_no_import_circle():
    graph = import_graph()
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not circles, "import circles in gemmcompare:\n" + "\n".join(
        f"  {len(c)} modules ({', '.join(c)}); one circle: {describe(graph, a_cycle(graph, c))}" for c in circles)


def test_the_graph_sees_the_kinds_of_import_a_circle_hides_in(tmp_path):
    """Relative imports at any level, imports inside functions, `from pkg import submodule`, a package's
    __init__ run by an import of its submodule, and TYPE_CHECKING imports left out."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n"
                "def f():\n    from .sub import inner\n",
        "b.py": "import gemmcompare.a\n",
        "c.py": "from .sub.inner import x\n",
        "sub/__init__.py": "from ..b import y\n",
        "sub/inner.py": "from . import sibling\nfrom .. import c\n",
        "sub/sibling.py": "",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    graph = import_graph(tmp_path)
    assert graph["gemmcompare.a"] == {"gemmcompare.sub": 5, "gemmcompare.sub.inner": 5}  # not c: TYPE_CHECKING
    assert graph["gemmcompare.b"] == {"gemmcompare.a": 1}
    assert graph["gemmcompare.c"] == {"gemmcompare.sub": 1, "gemmcompare.sub.inner": 1}
    assert graph["gemmcompare.sub"] == {"gemmcompare.b": 1}
    # inside sub, sub's __init__ has run already: no edge to it
    assert graph["gemmcompare.sub.inner"] == {"gemmcompare.sub.sibling": 1, "gemmcompare.c": 2}
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert circles == [["gemmcompare.a", "gemmcompare.b", "gemmcompare.c", "gemmcompare.sub", "gemmcompare.sub.inner"]]
    cycle = a_cycle(graph, circles[0])
    assert cycle[0] == cycle[-1] and all(b in graph[a] for a, b in zip(cycle, cycle[1:]))
