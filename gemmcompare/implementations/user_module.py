"""A user's Python module, as the `python` family (python.py) meets it.

At validation the module is read, never run (ast): a missing file, a syntax error, no top-level binding of the
name, a binding that cannot be called (a constant, a class, an `async def`, a Triton `@triton.jit` kernel) and
a `def` or lambda whose signature cannot take the harness's call are spec errors (`check_source`). Inside the
measuring worker the module is imported (once per worker process: a fresh import after a crash), and what the
source alone could not tell (decorated or imported functions) is checked with inspect.signature
(`load_callable`). An exception at import or in the call is told by the last frame in the user's file
(`describe_exception`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import sys
import traceback
import types
from pathlib import Path
from typing import Callable

CALL = "{func}(a, b, c, alpha=alpha, beta=beta)"
CALL_FP8 = "{func}(a, b, c, alpha=alpha, beta=beta, scale_a=scale_a, scale_b=scale_b)"  # under FP8 contracts
GROUPED_KEYWORDS = ", m_offsets=m_offsets, masked_counts=masked_counts"  # added for grouped problems (grouped: true)
# Lines of a user's exception message kept in a row's reason (Triton's compile errors quote source).
MAX_MESSAGE_LINES = 12


class UserCodeError(RuntimeError):
    """The user's module failed (at import, at the checks after import, or in a call); the message names
    the place in the user's file."""


# ---------------------------------------------------------------------------------------------------
# The source, read without running it (validation)


class _Default:
    def __repr__(self):
        return "..."


_DEFAULT = _Default()
_LITERALS = {ast.Constant: "a constant", ast.JoinedStr: "a string", ast.List: "a list", ast.Tuple: "a tuple",
             ast.Set: "a set", ast.Dict: "a dict", ast.ListComp: "a list", ast.SetComp: "a set",
             ast.DictComp: "a dict", ast.GeneratorExp: "a generator"}


def shown(path: str | Path) -> str:
    """A path as a message shows it: relative to the working directory when it is below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(p)


def signature_of(args: ast.arguments) -> inspect.Signature:
    """The inspect.Signature a `def` or lambda with these arguments will have (defaults shown as ...)."""
    P = inspect.Parameter
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = [P(a.arg, P.POSITIONAL_ONLY if i < len(args.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
                default=_DEFAULT if i >= first_default else P.empty)
              for i, a in enumerate(positional)]
    if args.vararg:
        params.append(P(args.vararg.arg, P.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(P(a.arg, P.KEYWORD_ONLY, default=P.empty if d is None else _DEFAULT))
    if args.kwarg:
        params.append(P(args.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def signature_problem(sig: inspect.Signature, func: str, fp8: bool = False, grouped: bool = False) -> str | None:
    """Why a callable with this signature cannot take the harness's call (with the scales when `fp8`, the group
    offsets and counts when `grouped`), or None."""
    scales = {"scale_a": "sa", "scale_b": "sb"} if fp8 else {}
    groups = {"m_offsets": "o", "masked_counts": None} if grouped else {}
    try:
        sig.bind("a", "b", "c", alpha=1.0, beta=0.0, **scales, **groups)
    except TypeError as exc:
        call = (CALL_FP8 if fp8 else CALL).format(func=func)
        if grouped:
            call = call[:-1] + GROUPED_KEYWORDS + ")"
        return f"{func}{sig} cannot take the harness's call {call}: {exc}"
    return None


def _binds(target: ast.AST, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _binds(target.value, name)
    return False


def _module_level(body: list[ast.stmt]):
    """Every statement that runs at module level: the body, and the bodies of if/try/with/for/while."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _module_level(handler.body)


def _bindings(tree: ast.Module, name: str) -> list[ast.stmt]:
    out = []
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            out.append(node)
        elif isinstance(node, ast.Assign) and any(_binds(t, name) for t in node.targets):
            out.append(node)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and _binds(node.target, name) and node.value is not None:
            out.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name for a in node.names):
            out.append(node)
    return out


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _from_triton(tree: ast.Module) -> set[str]:
    """Names the module imports from triton (`from triton import jit`)."""
    return {a.asname or a.name for node in _module_level(tree.body) if isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[0] == "triton" for a in node.names}


def check_source(path: Path, func: str, fp8: bool = False, grouped: bool = False) -> str | None:
    """Why the module at `path` cannot give the harness a callable `func` (called with the scales when `fp8`),
    read without running it; None when it can, or when only importing it can tell (decorated, imported or
    computed bindings: the worker checks those after importing)."""
    where = shown(path)
    if path.suffix != ".py":
        return f"callable: {where} is not a Python file (.py)"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return f"callable: cannot read {where}: {exc}"
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        return f"{where}:{exc.lineno}: syntax error: {exc.msg}"
    found = _bindings(tree, func)
    if not found:
        functions = sorted(n.name for n in _module_level(tree.body) if isinstance(n, ast.FunctionDef))
        from difflib import get_close_matches

        near = get_close_matches(func, functions, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else (
            f"; its top-level functions are {', '.join(functions)}" if functions else "; it defines no function")
        return f"{where} has no top-level {func!r}{hint}"
    node = max(found, key=lambda n: n.lineno)  # the binding the module ends up with
    at = f"{where}:{node.lineno}"
    if isinstance(node, ast.AsyncFunctionDef):
        return (f"{at}: {func} is an `async def`: calling it only makes a coroutine; the harness needs a plain "
                f"function that enqueues the GEMM")
    if isinstance(node, ast.ClassDef):
        return f"{at}: {func} is a class; name a function (or an instance with __call__)"
    if isinstance(node, ast.FunctionDef):
        triton_names = _from_triton(tree)
        for dec in node.decorator_list:
            dotted = _dotted(dec)
            head, _, last = dotted.rpartition(".")
            if (head.split(".")[0] == "triton" or (not head and dotted in triton_names)) and \
                    last in ("jit", "autotune", "heuristics"):
                return (f"{at}: {func} is a Triton kernel (@{dotted}); name the Python function that launches "
                        f"it ({func}[grid](...)) with the signature {CALL.format(func='fn')}")
        if node.decorator_list:
            return None  # a decorator may change the signature: checked after import, in the worker
        problem = signature_problem(signature_of(node.args), func, fp8, grouped)
        return f"{at}: {problem}" if problem else None
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        value = node.value
        if isinstance(value, ast.Lambda):
            problem = signature_problem(signature_of(value.args), func, fp8, grouped)
            return f"{at}: {problem}" if problem else None
        if type(value) in _LITERALS:
            return f"{at}: {func} is bound to {_LITERALS[type(value)]}, which cannot be called"
    return None  # imported or computed (functools.partial, torch.compile(f), ...): checked after import


# ---------------------------------------------------------------------------------------------------
# The module, imported inside the measuring worker


_MODULES: dict[str, types.ModuleType] = {}  # per process: every worker imports the user's module afresh


def describe_exception(exc: BaseException, path: str, doing: str) -> str:
    """'doing: my_kernels.py:41 in matmul: ValueError: ...': the last frame in the user's file (and where
    the exception was raised, when deeper, in torch or triton)."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if _same_file(f.filename, path)]
    if isinstance(exc, SyntaxError) and exc.filename and _same_file(exc.filename, path):
        where = f"{shown(path)}:{exc.lineno}"
    elif mine:
        where = f"{shown(path)}:{mine[-1].lineno} in {mine[-1].name}"
        if frames[-1] is not mine[-1]:
            last = frames[-1]
            where += f" (raised at {_package_path(last.filename)}:{last.lineno} in {last.name})"
    elif frames:
        where = f"{_package_path(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name}"
    else:
        where = ""
    lines = f"{type(exc).__name__}: {exc}".strip().splitlines()
    if len(lines) > MAX_MESSAGE_LINES:
        lines = lines[:MAX_MESSAGE_LINES] + [f"... ({len(lines) - MAX_MESSAGE_LINES} more lines)"]
    text = "\n".join(lines)
    return f"{doing}: {where}: {text}" if where else f"{doing}: {text}"


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _package_path(filename: str) -> str:
    """.../site-packages/triton/runtime/jit.py -> triton/runtime/jit.py."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return shown(filename)


def import_module(path: str) -> types.ModuleType:
    """The user's module, imported once in this process (its folder first on sys.path, for its helpers)."""
    module = _MODULES.get(path)
    if module is not None:
        return module
    name = f"gemmcompare_user_{Path(path).stem}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserCodeError(f"importing {shown(path)}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module  # dataclasses, pickling and triton's source lookup need it registered
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's import failing is their row's CRASH
        sys.modules.pop(name, None)
        raise UserCodeError(describe_exception(exc, path, f"importing {shown(path)}")) from exc
    _MODULES[path] = module
    return module


def load_callable(path: str, func: str, fp8: bool = False, grouped: bool = False) -> Callable:
    """The callable, checked after import with inspect.signature (what the source alone could not tell)."""
    module = import_module(path)
    fn = getattr(module, func, None)
    where = shown(path)
    if fn is None:
        raise UserCodeError(f"{where}: the module has no attribute {func!r} after import")
    if not callable(fn):
        raise UserCodeError(f"{where}: {func} is a {type(fn).__name__}, which cannot be called")
    if inspect.iscoroutinefunction(fn):
        raise UserCodeError(f"{where}: {func} is a coroutine function; the harness needs a plain function")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have none: the call itself will tell
        return fn
    problem = signature_problem(sig, func, fp8, grouped)
    if problem:
        raise UserCodeError(f"{where}: {problem}")
    return fn

