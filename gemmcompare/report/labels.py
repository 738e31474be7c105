"""Names of implementations as plots show them: short enough for a legend, never cut, and keeping what tells
rows apart (tile, cluster, schedule, stages), with long labels wrapped onto lines.

    legend_labels(["mma_sync[block=128x256x64,...,stages=3,...]", "cutlass.cutlass3x_sm90_..._2x1x1_coop_..."])

Two spellings of a name exist. A parametrized implementation reads `head[key=value,...]`: parameters that
every member of its head shares in this legend are dropped unless they are identity parameters (block, tile,
cluster, schedule, stages, warp tile, warps), which are always kept; a head with one member shows only
those. A CUTLASS/CuTe procedural name reads
`cutlass.<kind>_<token>_..._<token>`: the tile, cluster, schedule and stage tokens are always kept, any other
token only where names of the same kind differ in it. Tables always show full names.
"""

from __future__ import annotations

import re
from typing import Iterable

IDENTITY_PARAMS = ("config", "name", "block", "tile", "cluster", "schedule", "stages", "warp_tile", "warps")
_SELF_EXPLANATORY = ("config", "name")  # keys whose values read fine alone
_NAME_RE = re.compile(r"^(?P<head>[^\[]*)(?:\[(?P<params>.*)\])?$")
_SHAPE3 = re.compile(r"^\d+x\d+x\d+$")
_STAGES = re.compile(r"^(\d+st|st\d+|stauto)$")
_SCHEDULES = {"coop": "coop", "pp": "pingpong", "ws": "ws", "pingpong": "pingpong", "cooperative": "coop",
              "pipe": "pipelined"}
_CONTRACT_TOKEN = re.compile(r"^(b?f16|tf32|f32|f64|s8|s32|e4m3|e5m2|tensorop|simt|tn|nt|tt|nn|align\d+)$")
_PROCEDURAL = re.compile(r"^(?P<prefix>[a-z_]+\.)?(?P<kind>(cutlass\dx|cute)_sm\d+)_(?P<rest>.+)$")


def split_name(name: str) -> tuple[str, list[tuple[str, str]]]:
    """'mma_sync[block=128x256x32,stages=3]' -> ('mma_sync', [('block', '128x256x32'), ('stages', '3')])."""
    match = _NAME_RE.match(name.strip())
    if not match or match.group("params") is None:
        return name, []
    params, depth, current = [], 0, ""
    for ch in match.group("params"):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(current)
            current = ""
        else:
            current += ch
    if current:
        params.append(current)
    pairs = []
    for p in params:
        key, sep, value = p.partition("=")
        pairs.append((key.strip(), value.strip()) if sep else ("", key.strip()))
    return match.group("head"), pairs


def _param_labels(names: list[str]) -> dict[str, str]:
    parsed = {n: split_name(n) for n in names}
    by_head: dict[str, list[str]] = {}
    for n, (head, _) in parsed.items():
        by_head.setdefault(head, []).append(n)
    out = {}
    for head, members in by_head.items():
        if len(members) > 1:
            shared = set.intersection(*(set(parsed[n][1]) for n in members))
        else:  # alone of its head: nothing to tell apart, its identity parameters describe it
            shared = {(k, v) for k, v in parsed[members[0]][1] if k not in IDENTITY_PARAMS}
        for n in members:
            kept = [(k, v) for k, v in parsed[n][1] if (k, v) not in shared or k in IDENTITY_PARAMS]
            kept = kept or parsed[n][1]
            text = ",".join(f"{k}={v}" if k and k not in _SELF_EXPLANATORY else v for k, v in kept)
            out[n] = head + (f"[{text}]" if kept else "")
    return out


def _token_role(kind: str, index_of_shape: int, token: str) -> str | None:
    """'tile', 'cluster', 'schedule', 'stages' for the tokens always kept, else None."""
    if _SHAPE3.match(token):
        if index_of_shape == 0:
            return "tile"
        if index_of_shape == 1 and kind.startswith("cutlass3x"):
            return "cluster"  # CUTLASS 3 names: tile, then cluster shape
        return None
    if token in _SCHEDULES:
        return "schedule"
    if _STAGES.match(token):
        return "stages"
    return None


def _procedural_labels(names: list[str]) -> dict[str, str]:
    """Labels for 'cutlass.cutlass3x_sm90_tensorop_f16_f32_f32_128x256x64_2x1x1_coop_..._rasterN_swz4' style
    names: 'cutlass3x_sm90 128x256x64 cluster 2x1x1 coop stauto rasterN swz4': the tile, cluster, schedule and
    stage tokens always, any other token that not every name of the same kind has. A name alone of its kind
    keeps every token but the ones the contract fixes (types, layout, alignment)."""
    parts: dict[str, tuple[str, list[str]]] = {}
    for n in names:
        m = _PROCEDURAL.match(n)
        if m:
            parts[n] = (m.group("kind"), m.group("rest").split("_"))
    by_kind: dict[str, list[str]] = {}
    for n, (kind, _) in parts.items():
        by_kind.setdefault(kind, []).append(n)
    out = {}
    for kind, members in by_kind.items():
        if len(members) > 1:
            shared = set.intersection(*(set(parts[n][1]) for n in members))
        else:
            shared = {t for t in parts[members[0]][1] if _CONTRACT_TOKEN.match(t)}
        for n in members:
            words, shapes = [], 0
            for token in parts[n][1]:
                role = _token_role(kind, shapes, token)
                shapes += bool(_SHAPE3.match(token))
                if role == "cluster":
                    words.append(f"cluster {token}")
                elif role == "schedule":
                    words.append(_SCHEDULES[token])
                elif role or token not in shared:
                    words.append(token)
            out[n] = " ".join([kind] + words)
    return out


def legend_labels(names: Iterable[str]) -> dict[str, str]:
    """A label per implementation name for one legend (or axis): unique, never cut; see the module doc."""
    names = list(dict.fromkeys(names))
    out = {n: n for n in names}
    procedural = _procedural_labels([n for n in names if not split_name(n)[1]])
    out.update(procedural)
    out.update(_param_labels([n for n in names if split_name(n)[1]]))
    seen: dict[str, list[str]] = {}
    for n, label in out.items():
        seen.setdefault(label, []).append(n)
    for group in seen.values():  # two names that read the same keep their full names
        if len(group) > 1:
            for n in group:
                out[n] = n
    return out


def wrap(label: str, width: int = 44, max_lines: int = 4) -> str:
    """The label on lines of at most `width` characters, broken after ',', ' ' or '_' (never inside a token),
    on at most `max_lines` lines (the last line takes what is left: nothing is cut)."""
    if len(label) <= width:
        return label
    pieces = []
    for piece in re.findall(r"[^, ]+[, ]?", label):  # break after ',' or ' '; after '_' only inside a long token
        pieces.extend(re.findall(r"[^_]+_?", piece) if len(piece) > width else [piece])
    lines, current = [], ""
    for piece in pieces:
        if current and len(current) + len(piece) > width and len(lines) < max_lines - 1:
            lines.append(current.rstrip())
            current = ""
        current += piece
    if current:
        lines.append(current.rstrip())
    return "\n".join(lines)
