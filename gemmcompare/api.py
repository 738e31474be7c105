"""The Python API, for notebooks and scripts: the command line's runs, rows and verdicts as pandas frames.

    import gemmcompare
    df, receipt = gemmcompare.load("experiments/studies/quickstart/h200")   # run folder, results file, run id, store
    df, receipt = gemmcompare.run("experiments/quickstart.yaml", shapes="4096x4096x4096", only="cublas", l2="evict")
    verdicts = gemmcompare.compare("experiments/studies/quickstart/h200", (df, receipt))

`load` and `run` give one row per result with every stored column (times in milliseconds, at full precision;
`samples_ms` as a list of floats, `params`, `checks`, `timing`, `telemetry` decoded) and the run's GPU in a
`gpu` column; the receipt is also in `df.attrs["receipt"]`. `run` measures exactly as `gemmcompare run` does
(the same Runner: a worker process per GPU, replaced after a crash or a hang) and raises the errors the
command line turns into exit codes: SpecError (2), NoDeviceError (3, on a machine without a CUDA device,
after building what it can), GemmCompareError. Nothing here imports torch, pandas or matplotlib until it is
called, so `import gemmcompare` stays cheap. The work is done by the measuring stage (gemmcompare.runner)
and the verdicts' rule (gemmcompare.verdicts).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Union

if TYPE_CHECKING:
    import pandas as pd

Source = Union[str, Path, Any]  # a run folder, results.json/csv, a run id/prefix/'latest', a store file or a Store


def load(source: Source, *, store: str | Path | None = None, run: str = "latest") -> tuple["pd.DataFrame", dict]:
    """(rows, receipt) of one run. `source` is any of the sources the commands take (README, "Naming runs"): a
    run folder or its results.json / results.csv (maybe .gz or .xz: committed runs under
    experiments/studies/<study>/<gpu>/), a run id, unique id prefix or 'latest' in `store` (default
    ./gemmcompare.db), 'STORE.db:RUN', a folder holding exactly one run below it, or a store itself (a .db file or
    a Store), in which case `run` picks the run (default 'latest'; df.attrs["note"] says which was read).
    Raises SourceError (a GemmCompareError, exit code 2 on the command line) saying what cannot be found, or what
    the path is when it is not one run (a receipt, a spec, a folder of many runs ...) and what to pass instead."""
    from .store import DEFAULT_STORE, SourceError
    from .store.sources import API, load_source

    if hasattr(source, "find_run"):  # an open Store
        return _frame(*_from_store_object(source, run))
    if not isinstance(source, (str, os.PathLike)):
        raise SourceError(f"load: expected a path, a run id or a Store, got {type(source).__name__}")
    src = load_source(source, store or DEFAULT_STORE, terms=API, run=run)
    df, receipt = _frame(src.rows, src.receipt)
    if src.note:
        df.attrs["note"] = src.note
    return df, receipt


def _from_store_object(store, run: str) -> tuple[Any, dict]:
    from .store import SourceError

    found = store.find_run(run)
    if found is None:
        raise SourceError(f"no run '{run}' in {store.path}")
    receipt = dict(found.get("receipt") or {}, run_id=found["run_id"])
    return store.results(found["run_id"]), receipt


def _frame(rows, receipt: dict) -> tuple["pd.DataFrame", dict]:
    from .notebook import sortable_problems
    from .report.data import attach_run

    df = sortable_problems(attach_run(rows, receipt))
    df.attrs["receipt"] = receipt
    return df, receipt


def run(spec: str | Path | dict, *, shapes: str | Iterable | None = None, only: str | None = None,
        contracts: str | Iterable[str] | None = None, l2: str | None = None, energy: bool = False,
        oracle: bool = False, check_only: bool = False, store: str | Path | None = None,
        runs_dir: str | Path = "runs", cache_dir: str | Path | None = None, arch: str | None = None, jobs: int | None = None,
        progress: bool = False, isolate: bool = True, report: bool = False) -> tuple["pd.DataFrame", dict]:
    """Run a spec (a YAML path, or the spec as a dict) as `gemmcompare run` does and return (rows, receipt).

    shapes: replace the spec's problems ('4096x4096x4096,1024x1024x1024', or a list of such strings or of
    (m, n, k) tuples); only: a regular expression on implementation names; contracts: some of the spec's
    contracts by name ('a,b' or a list; like --contract); l2: the L2 policy to time under
    instead of the spec's timing.l2 ('flush', 'evict', 'rotate', 'warm'; like --l2: the spec hash, receipt
    and rows say it as if the spec did; another value raises InputError); energy: measure each timed row's
    energy per GEMM too (like --energy); oracle: measure every tuned row's candidates in full after its
    pick (like --oracle); check_only: correctness without
    timing; store / runs_dir: where the rows and the run folder go (default ./gemmcompare.db, ./runs);
    isolate=False measures in this process (debugging, like --in-process); report=True writes the run
    folder's report/ as the command does."""
    from .plan import narrow
    from .runner.parent import RunOptions, Runner
    from .spec import load_spec, parse_spec
    from .store import DEFAULT_STORE

    if isinstance(spec, dict):
        import yaml

        exp = parse_spec(yaml.safe_dump(spec, sort_keys=False), "<spec dict>", base_dir=Path.cwd())
    else:
        exp = load_spec(spec)
    if contracts is not None and not isinstance(contracts, str):
        contracts = ",".join(contracts)
    exp = narrow(exp, _shapes_text(shapes), check_only, only, l2=l2, energy=energy, oracle=oracle,
                 contracts=contracts)
    opts = RunOptions(store=Path(store or DEFAULT_STORE), runs_dir=Path(runs_dir),
                      cache_dir=Path(cache_dir) if cache_dir else None, arch=arch, jobs=jobs, progress=progress,
                      isolate=isolate)
    outcome = Runner(exp, opts).run()
    receipt_file = Path(outcome.run_dir) / "receipt.json"
    receipt = json.loads(receipt_file.read_text()) if receipt_file.exists() else {"run_id": outcome.run_id}
    receipt.setdefault("run_status", outcome.status)
    if report:
        from .report import build_report

        build_report(outcome.run_id, store=opts.store, out_dir=Path(outcome.run_dir) / "report",
                     plots=list(exp.report.plots) or None)
    import pandas as pd

    return _frame(pd.DataFrame([r.to_record() for r in outcome.rows]), receipt)


def _shapes_text(shapes) -> str | None:
    if shapes is None or isinstance(shapes, str):
        return shapes
    return ",".join(s if isinstance(s, str) else "x".join(str(int(d)) for d in s) for s in shapes)


def _pair(side, store) -> tuple[dict, Any, str | None]:
    """(receipt, rows, label) from anything compare() takes."""
    import pandas as pd

    from .notebook import plain_problems

    if isinstance(side, tuple) and len(side) == 2:
        a, b = (plain_problems(x) for x in side)
        if isinstance(a, pd.DataFrame) and isinstance(b, dict):  # load()'s (rows, receipt)
            return b, a, None
        if isinstance(a, dict) and isinstance(b, pd.DataFrame):  # the report modules' (receipt, rows)
            return a, b, None
    if isinstance(side, pd.DataFrame):
        return dict(side.attrs.get("receipt") or {}), plain_problems(side), None
    df, receipt = load(side, store=store)
    return receipt, plain_problems(df), str(side)



def compare(base, cand, *, threshold: float | None = None, store: str | Path | None = None) -> "pd.DataFrame":
    """Verdicts of `cand` against `base`, row by row (problem, contract, implementation), by the rule of
    `gemmcompare compare` (docs/reports.md). Each side is what load() takes, or what it returns ((rows, receipt),
    or a frame whose attrs hold the receipt). threshold: the smallest relative change that counts (default: the
    candidate spec's, else 0.03). The frame's attrs hold `summary` (the command's text), `notes`, `exit_code`
    (1 when a row regressed), `threshold` and `basis`."""
    from .receipt import compare_threshold
    from .verdicts import compare as compare_runs

    b_receipt, b_rows, b_label = _pair(base, store)
    c_receipt, c_rows, c_label = _pair(cand, store)
    comp = compare_runs((b_receipt, b_rows), (c_receipt, c_rows), compare_threshold(c_receipt, threshold), base_label=b_label, cand_label=c_label)
    table = comp.table.copy()
    table.attrs.update(summary=comp.summary_text(), notes=list(comp.notes), exit_code=comp.exit_code,
                       threshold=comp.threshold, basis=comp.basis)
    return table
