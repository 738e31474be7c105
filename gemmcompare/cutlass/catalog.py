"""The named configurations: cutlass_configs/*.yaml, one file per kernel template.

File format (every key but `configs` optional):

    template: sm90                # a kernel template of kernel_templates.TEMPLATES: what the entries are
    defaults: {dtype: f16, ...}   # fields every entry of the file gets unless it sets them
    configs:
      sm90_coop_128x256x64_c1x1:  # the name a spec uses: cutlass: {config: sm90_coop_128x256x64_c1x1}
        tile: [128, 256, 64]
        ...

Every problem in every file is collected and reported at once (file, line, entry, reason). Two entries
that resolve to the same configuration (same procedural name) are an error: one name per kernel.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..errors import GemmCompareError
from .config import ConfigError, GemmConfig
from .kernel_templates import kernel_template
from ..paths import CUTLASS_CONFIGS_DIR


class CatalogError(GemmCompareError):
    """cutlass_configs/ holds an invalid configuration file; the message lists every problem."""

    exit_code = 2


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    config: GemmConfig
    file: Path
    line: int
    fields: Mapping[str, Any] = field(default_factory=dict)  # the fields the entry itself sets
    defaults: Mapping[str, Any] = field(default_factory=dict)  # its file's `defaults:`

    @property
    def where(self) -> str:
        return f"{self.file.name}:{self.line}"

    def resolve(self, overrides: Mapping[str, Any]):
        """The entry's configuration with fields overridden: the fields it sets, then its file's defaults,
        then the kernel template's, which are computed again from the result (so a new dtype brings its
        own alignment, MMA shape...; `config.replace` would keep the old dtype's)."""
        if not overrides:
            return self.config
        return type(self.config).from_fields({**self.defaults, **self.fields, **overrides})


# libyaml's safe loader where PyYAML has it: the catalog loads with every spec, and the pure-Python
# loader took most of `gemmcompare validate`'s time
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _line_of_keys(text: str) -> dict[str, int]:
    """1-based line of each entry name under `configs:` (yaml.safe_load keeps no positions)."""
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text, Loader=SAFE_LOADER)
    except yaml.YAMLError:
        return lines
    if not isinstance(root, yaml.MappingNode):
        return lines
    for key, value in root.value:
        if key.value == "configs" and isinstance(value, yaml.MappingNode):
            for name_node, _ in value.value:
                lines[str(name_node.value)] = name_node.start_mark.line + 1
    return lines


def load_file(path: Path) -> tuple[list[CatalogEntry], list[str]]:
    """The entries of one file and the problems found in it."""
    problems: list[str] = []
    text = path.read_text()
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        return [], [f"{path}: not valid YAML: {exc}"]
    if not isinstance(data, dict):
        return [], [f"{path}: expected a mapping with `template` and `configs`"]
    unknown = sorted(set(data) - {"template", "family", "defaults", "configs"})
    if unknown:
        problems.append(f"{path}: unknown top-level key(s) {', '.join(unknown)} (expected template, defaults, configs)")
    try:  # `family` is the key's older name
        cls = kernel_template(data.get("template", data.get("family"))).config
    except ConfigError as exc:
        return [], [f"{path}: template: {exc}"]
    defaults = data.get("defaults") or {}
    configs = data.get("configs") or {}
    if not isinstance(defaults, dict) or not isinstance(configs, dict):
        return [], problems + [f"{path}: `defaults` and `configs` must be mappings"]
    lines = _line_of_keys(text)
    entries = []
    for name, fields in configs.items():
        line = lines.get(str(name), 0)
        where = f"{path}:{line}: configs.{name}"
        if not isinstance(name, str) or not name.isidentifier():
            problems.append(f"{where}: a configuration name must be an identifier (letters, digits, _)")
            continue
        if not isinstance(fields, dict):
            problems.append(f"{where}: expected a mapping of fields")
            continue
        try:
            config = cls.from_fields({**defaults, **fields})
        except ConfigError as exc:
            problems.append(f"{where}: {exc}")
            continue
        entries.append(CatalogEntry(name, config, path, line, dict(fields), dict(defaults)))
    return entries, problems


def load_catalog(directory: Path = CUTLASS_CONFIGS_DIR) -> dict[str, CatalogEntry]:
    """Every named configuration under `directory`, keyed by name; raises CatalogError on any problem."""
    entries: dict[str, CatalogEntry] = {}
    by_procedural: dict[str, CatalogEntry] = {}
    problems: list[str] = []
    for path in sorted(Path(directory).glob("*.yaml")):
        found, file_problems = load_file(path)
        problems += file_problems
        for entry in found:
            if entry.name in entries:
                problems.append(f"{entry.file}:{entry.line}: configs.{entry.name}: name already used at "
                                f"{entries[entry.name].where}")
                continue
            twin = by_procedural.get(entry.config.procedural_name)
            if twin:
                problems.append(f"{entry.file}:{entry.line}: configs.{entry.name}: the same configuration as "
                                f"{twin.name} ({twin.where})")
                continue
            entries[entry.name] = entry
            by_procedural[entry.config.procedural_name] = entry
    if problems:
        raise CatalogError("invalid CUTLASS configuration file(s):\n  " + "\n  ".join(problems))
    return entries


@functools.lru_cache(maxsize=None)
def catalog() -> dict[str, CatalogEntry]:
    """The repository's catalog (cutlass_configs/), loaded once."""
    return load_catalog(CUTLASS_CONFIGS_DIR)


def lookup(name: str) -> CatalogEntry:
    """A catalog entry by its name or by its configuration's procedural name."""
    entries = catalog()
    if name in entries:
        return entries[name]
    for entry in entries.values():
        if entry.config.procedural_name == name:
            return entry
    raise KeyError(name)
