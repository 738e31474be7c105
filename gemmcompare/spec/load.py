"""Reading a spec: the file (bounded, UTF-8), its YAML, the top-level keys, then each section in turn; every
issue found is raised at once in one SpecError, else the Experiment is returned."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..contracts.correctness import FIXTURES
from ..errors import SpecError
from ..limits import MAX_ROWS, MAX_SPEC_BYTES, exceeded
from .checker import _Checker, _kind
from .contract_entries import _contracts
from .experiment import Experiment, count_rows
from .implementation_entries import _implementations
from .issues import SpecIssue, nearest
from .problem_entries import _problems
from .settings import _correctness, _report, _timing
from .yaml_lines import _compose


TOP_KEYS = {"name", "description", "problems", "contracts", "implementations", "baseline", "correctness", "timing", "report"}


def load_spec(path: str | Path) -> Experiment:
    """Read, validate and expand an experiment spec. Raises SpecError listing every issue."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)  # never more: the path may be /dev/zero or a 50 GB file
    except FileNotFoundError:
        raise SpecError([SpecIssue(str(path), (), None, "file not found")]) from None
    except OSError as exc:  # a folder, no permission, an I/O error
        raise SpecError([SpecIssue(str(path), (), None, f"cannot read the spec: {exc.strerror or exc}")]) from None
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError([SpecIssue(str(path), (), None, _too_big())])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError([SpecIssue(str(path), (), line, f"not UTF-8 text (byte {exc.start}: {exc.reason})")]) from None
    return parse_spec(text, str(path), base_dir=p.parent)


def _grouped_fp8(ck: _Checker, problems, contracts, implementations) -> None:
    """A spec with grouped problems and an FP8 contract: an implementation that runs grouped problems but has no
    FP8 path for them (library.cublas_loop) is an error at its entry, since the spec asks for rows it can never
    have. A family that takes no grouped problem at all is a SKIP row instead, as for every grouped problem, and
    one with an FP8 path SKIPs the scalings it cannot apply, with the reason."""
    if not any(e.problem.is_grouped for e in problems):
        return
    for contract in (c for c in contracts if c.is_fp8):
        for impl in implementations:
            if impl.takes_grouped and not impl.grouped_fp8 and impl.planned_under(contract):
                ck.error(("implementations", ck.implementation_entry.get(impl.name, 0)),
                         f"{impl.name} cannot run the spec's grouped problems under FP8 contract {contract.name}: "
                         f"{impl.grouped_fp8_note}; drop the contract, or run the FP8 contract in a spec of its own")


def _too_big() -> str:
    return exceeded(f"the spec is more than {MAX_SPEC_BYTES:,} bytes", MAX_SPEC_BYTES, "MAX_SPEC_BYTES")


def parse_spec(text: str, file: str = "<spec>", base_dir: Path | None = None) -> Experiment:
    if len(text) > MAX_SPEC_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_SPEC_BYTES:
        raise SpecError([SpecIssue(file, (), None, _too_big())])
    data, lines = _compose(text, file)
    ck = _Checker(file, lines)
    if not isinstance(data, dict):
        raise SpecError([SpecIssue(file, (), 1, f"a spec must be a mapping of keys (name, problems, ...), got {_kind(data)}")])
    ck.unknown_keys(data, TOP_KEYS, (), "the spec")
    for required in ("name", "problems", "contracts", "implementations"):
        if required not in data:
            ck.error((), f"missing required key {required!r}")

    name = data.get("name", "")
    if "name" in data and (not isinstance(name, str) or not name or not all(ch.isalnum() or ch in "-_" for ch in name)):
        ck.error(("name",), f"name must be letters, digits, '-' and '_', got {name!r}")
    description = data.get("description", "") or ""
    if not isinstance(description, str):
        ck.error(("description",), "description must be a string")

    problems = _problems(ck, data.get("problems"))
    contracts = _contracts(ck, data.get("contracts"))
    implementations = _implementations(ck, data.get("implementations"), contracts, base_dir or Path("."))
    correctness = _correctness(ck, data.get("correctness"))
    timing = _timing(ck, data.get("timing"))
    report = _report(ck, data.get("report"), contracts)

    baseline, baselines = _baseline(ck, data.get("baseline"), contracts, implementations)

    for entry_index, entry in enumerate(problems):
        if entry.fixtures:
            bad = [f for f in entry.fixtures if f not in FIXTURES]
            for f in bad:
                ck.error(("problems", entry_index, "fixtures"), f"unknown fixture {f!r}; expected {list(FIXTURES)}", nearest(f, FIXTURES))

    _grouped_fp8(ck, problems, contracts, implementations)
    rows = count_rows(len(problems), contracts, implementations)
    if rows > MAX_ROWS:
        ck.error((), exceeded(f"{len(problems):,} problems x {rows // max(len(problems), 1):,} (contract, "
                              f"implementation) pairs make {rows:,} rows", MAX_ROWS, "MAX_ROWS"))
    if ck.issues:
        raise SpecError(ck.all_issues())
    return Experiment(
        name=name,
        description=description,
        path=file,
        text=text,
        spec_hash=hashlib.sha256(text.encode()).hexdigest(),
        problems=tuple(problems),
        contracts=tuple(contracts),
        implementations=tuple(implementations),
        baseline=baseline,
        baselines=baselines,
        correctness=correctness,
        timing=timing,
        report=report,
    )


def _baseline(ck, raw, contracts, implementations) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """(baseline, baselines): `baseline: NAME` (one for every contract), or a mapping `{CONTRACT: NAME, ...}`
    (each contract its own: a spec with BF16 and FP8 contracts has no one library row that runs under both).
    A contract the mapping leaves out has none."""
    if raw is None:
        return None, ()
    names = [impl.name for impl in implementations]

    def known(name, path) -> bool:
        if not isinstance(name, str):
            ck.error(path, f"baseline must be an implementation name, got {_kind(name)}")
            return False
        if name not in names:
            ck.error(path, f"baseline {name!r} is not one of this spec's implementations {names}", nearest(name, names))
            return False
        return True

    if not isinstance(raw, (str, dict)):
        ck.error(("baseline",), f"baseline must be an implementation name or a mapping {{contract: implementation}}, "
                                f"got {_kind(raw)}")
        return None, ()
    if isinstance(raw, str):
        return (raw if known(raw, ("baseline",)) else None), ()
    spec_contracts = [c.name for c in contracts]
    out = []
    for contract, name in raw.items():
        if contract not in spec_contracts:
            ck.error(("baseline", contract), f"baseline for {contract!r}: not one of this spec's contracts "
                                             f"{spec_contracts}", nearest(str(contract), spec_contracts))
        elif known(name, ("baseline", contract)):
            out.append((contract, name))
    if not raw:
        ck.error(("baseline",), "baseline is an empty mapping: name one implementation, or one per contract")
    return None, tuple(out)
