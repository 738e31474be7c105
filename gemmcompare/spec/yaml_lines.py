"""YAML with line numbers: safe loading only, nesting and alias expansion bounded, the line of every key path
kept for the issues."""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import SpecError
from ..limits import MAX_NESTING, MAX_VALUES, exceeded
from .issues import SpecIssue


class _BoundedLoader(yaml.SafeLoader):
    """The pure-Python SafeLoader (where libyaml is missing), stopping at MAX_NESTING levels while it
    composes: PyYAML composes recursively, so a deeper document would end in a RecursionError."""

    def __init__(self, text: str, file: str):
        super().__init__(text)
        self.file, self.depth = file, 0

    def compose_node(self, parent, index):
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise _too_deep(self.file, self.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _too_deep(file: str, line: int | None) -> SpecError:
    return SpecError([SpecIssue(file, (), line, exceeded(f"the YAML nests more than {MAX_NESTING} levels deep",
                                                         MAX_NESTING, "MAX_NESTING"))])


_CSafeLoader = getattr(yaml, "CSafeLoader", None)  # libyaml: composes a spec some 30x faster


def _next_event_within_nesting(scan, file: str) -> bool:
    """scan.check_event(), except that libyaml's own nesting limit (PyYAML >= 6.0.4 builds it in; its scanner
    reads ahead, so it can fire before our count of events reaches MAX_NESTING) reads as ours does."""
    try:
        return scan.check_event()
    except yaml.MarkedYAMLError as exc:
        if "nesting" in str(exc.problem or ""):
            mark = exc.problem_mark or exc.context_mark
            raise _too_deep(file, mark.line + 1 if mark else None) from None
        raise


def _loader(text: str, file: str):
    """A safe loader for `text`, its nesting checked before anything is composed."""
    if _CSafeLoader is None:
        return _BoundedLoader(text, file)
    scan, depth = _CSafeLoader(text), 0  # libyaml composes recursively in C: bound the depth from the events first
    try:
        while _next_event_within_nesting(scan, file):
            event = scan.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_NESTING:
                    raise _too_deep(file, event.start_mark.line + 1)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    finally:
        scan.dispose()
    return _CSafeLoader(text)


# what PyYAML's reader refuses (every control character but tab, newline and carriage return)
_NOT_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE


def _check_printable(text: str, file: str) -> None:
    bad = _NOT_PRINTABLE.search(text)
    if bad:
        before = text[: bad.start()]
        ch = bad.group()
        raise SpecError([SpecIssue(file, (), before.count("\n") + 1,
                                   f"not valid YAML: the character {ch!r} (U+{ord(ch):04X}) at column "
                                   f"{bad.start() - before.rfind(chr(10))} is not allowed (a spec is plain text: "
                                   f"no control characters but tab and newline)")])


def _compose(text: str, file: str) -> tuple[Any, dict[tuple, int]]:
    """Parse YAML safely, keeping the line of every key path."""
    _check_printable(text, file)
    loader = None
    try:
        loader = _loader(text, file)
        node = loader.get_single_node()
        lines: dict[tuple, int] = {}
        data = _construct(loader, node, (), lines, _Expansion(file)) if node is not None else None
        return data, lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError([SpecIssue(file, (), line, f"not valid YAML: {exc.problem or exc}")]) from None
    except yaml.YAMLError as exc:
        raise SpecError([SpecIssue(file, (), None, f"not valid YAML: {exc}")]) from None
    finally:
        if loader is not None:
            loader.dispose()


_STANDARD_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_INT_TAG = "tag:yaml.org,2002:int"


class _Expansion:
    """What building the plain data from the YAML graph has done so far: an alias repeats the node it names,
    so a few lines can stand for billions of values (or for themselves: a recursive alias)."""

    def __init__(self, file: str):
        self.file, self.values, self.open = file, 0, set()

    def issue(self, path, node, message):
        return SpecError([SpecIssue(self.file, path, node.start_mark.line + 1, message)])


def _scalar(loader, node, path, state: _Expansion):
    try:
        return loader.construct_object(node, deep=True)
    except ValueError as exc:  # e.g. an integer past Python's 4300-digit conversion limit
        if node.tag == _INT_TAG:
            digits = sum(ch.isdigit() for ch in node.value)
            raise state.issue(path, node, f"a number with {digits:,} digits cannot be read (no setting needs "
                                          f"more than 20)") from None
        raise state.issue(path, node, f"cannot read the value {node.value[:40]!r}: {exc}") from None


def _construct(loader, node, path, lines, state: _Expansion):
    lines[path] = node.start_mark.line + 1
    state.values += 1
    if state.values > MAX_VALUES:
        raise state.issue(path, node, exceeded(f"the spec holds more than {MAX_VALUES:,} values once its YAML "
                                               f"aliases (*name) are expanded", MAX_VALUES, "MAX_VALUES"))
    if len(path) > MAX_NESTING:  # aliases can nest a deep node inside another
        raise state.issue(path, node, exceeded(f"the YAML nests more than {MAX_NESTING} levels deep once its "
                                               f"aliases are expanded", MAX_NESTING, "MAX_NESTING"))
    if not isinstance(node, yaml.ScalarNode) and node.tag not in _STANDARD_TAGS:
        # safe loading: no object construction, and no tag silently ignored either
        raise state.issue(path, node, f"not valid YAML: tag {node.tag!r} is not allowed")
    if isinstance(node, yaml.ScalarNode):
        return _scalar(loader, node, path, state)
    if id(node) in state.open:
        raise state.issue(path, node, "a YAML alias that contains itself (a recursive alias) cannot be read")
    state.open.add(id(node))
    try:
        if isinstance(node, yaml.MappingNode):
            out = {}
            for key_node, value_node in node.value:
                key = _scalar(loader, key_node, path, state) if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "a list or mapping"
                    raise state.issue(path, key_node, f"keys must be names, got {shown!r}")
                if key in out:
                    raise state.issue(path + (key,), key_node, "duplicate key")
                out[key] = _construct(loader, value_node, path + (key,), lines, state)
            return out
        return [_construct(loader, v, path + (i,), lines, state) for i, v in enumerate(node.value)]
    finally:
        state.open.discard(id(node))
