"""The report of one run or several: tables, plots and one self-contained HTML page with the receipts.

Files written under out_dir: report.md, report.html, summary.csv (full precision), and <plot>.png/.svg per plot.
"""

from __future__ import annotations

import html as _html
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from .data import attach_run, gpu_name, run_label
from .html import figures_html, page, receipt_html, receipt_markdown
from . import rendering
from .across import across_section
from .plots import Plot, make_plots
from .predictions import predictions_section
from ..files import write_csv
from ..progress import SILENT, Progress
from .energy_ranking import energy_ranking_section
from .grouped_lead import grouped_section
from .picks import picks_section
from .summary import summary_html, summary_markdown
from .tables import summary_table, tables_html, tables_markdown

RunData = tuple[dict, pd.DataFrame]

RESULTS_NOTE = ("Full-precision values: summary.csv. Times are medians in milliseconds; TFLOP/s count the logical "
                "2·M·N·K; % of baseline = baseline median / median × 100 in the same run, contract and problem; "
                "errors are the max over every fixture, against the rounded-input reference (judges) and the "
                "original-input reference (orig, reported).")


@dataclass
class Report:
    out_dir: Path
    title: str
    summary: pd.DataFrame  # full precision, the CSV's content
    plots: list[Plot] = field(default_factory=list)
    markdown: Path | None = None
    html: Path | None = None
    csv: Path | None = None
    across_csv: Path | None = None  # the across-contracts table (report.across), full precision

    def __str__(self) -> str:  # what `print(build_report(...))` should say: where to look
        return str(self.html or self.out_dir)

    @property
    def files(self) -> list[Path]:
        out = [p for p in (self.markdown, self.html, self.csv, self.across_csv) if p]
        for plot in self.plots:
            out.extend(plot.files)
        return out

    def text_summary(self) -> str:
        drawn = sum(1 for p in self.plots if not p.skipped)
        lines = [f"{self.title}", _status_line(self.summary),
                 f"{drawn} plot(s) drawn, {len(self.plots) - drawn} skipped"]
        for p in self.plots:
            if p.skipped:
                lines.append(f"  not drawn: {p.title}: {p.skipped}")
        lines.append(f"report: {self.html}")
        return "\n".join(lines)


def _as_runs(runs: RunData | Sequence[RunData]) -> list[RunData]:
    if isinstance(runs, tuple) and len(runs) == 2 and isinstance(runs[1], pd.DataFrame):
        return [runs]
    return list(runs)


def combine_runs(runs: RunData | Sequence[RunData]) -> pd.DataFrame:
    """Normalised rows of one or several runs, each tagged with its GPU name (`gpu` column)."""
    frames = [attach_run(df, receipt) for receipt, df in _as_runs(runs)]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else attach_run(pd.DataFrame(), {})


def _default_title(runs: list[RunData], rows: pd.DataFrame) -> str:
    gpus = [g for g in dict.fromkeys(rows["gpu"])] if len(rows) else []
    labels = [run_label(r, d) for r, d in runs]
    return f"gemmcompare report — {', '.join(labels)} on {' and '.join(gpus) or 'unknown GPU'}"


def build_report(runs: RunData | Sequence[RunData] | str, out_dir: str | Path, *, store: Any = None,
                 title: str | None = None, plots: list[str] | None = None, across: str | None = None,
                 progress: Progress = SILENT) -> Report:
    """Write the report of one run, a (receipt, rows) pair, or of several runs (a list of pairs) into out_dir.

    `runs` may also be a run id (or 'latest') of `store` (a Store or the path of one), as the runner's call
    `build_report(run_id, store=..., out_dir=...)` gives it.
    `plots`: the plot kinds to draw (default: all of PLOT_KINDS); a kind the data cannot support is skipped
    with a note in the report. `across`: a contract every other contract's rows are set beside (across.py;
    default: the spec's `report.across`, kept in the receipt). `progress` hears of each step as it ends: the
    summary, each plot kind drawn, the Markdown, each figure saved, the HTML (progress.py)."""
    if isinstance(runs, str):
        runs = _from_store(runs, store)
    runs = _as_runs(runs)
    across = across or next((r.get("report_across") for r, _ in runs if r.get("report_across")), None)
    plots = plots or with_energy_plot(spec_plots([r for r, _ in runs]), runs)
    with rendering.saving_in_parallel():  # figures on the prestarted pool, if there is one (rendering.py)
        return _build(runs, Path(out_dir), title, plots, across, progress)


def spec_plots(receipts: list[dict]) -> list[str] | None:
    """The plot kinds the runs' spec asks for (`report: {plots: [...]}`), None for all: the receipt's
    `report_plots` (recorded since 2026-12-03), else the spec file the receipt names, when it is still the spec
    that ran (the same spec hash); a report of several specs' runs draws all kinds."""
    asked = set()
    for receipt in receipts:
        if "report_plots" in receipt:
            kinds = receipt["report_plots"]
        else:
            kinds = _plots_of_unchanged_spec(receipt)
        if not kinds:
            return None
        asked.add(tuple(kinds))
    return list(asked.pop()) if len(asked) == 1 else None


def with_energy_plot(kinds: list[str] | None, runs: list[RunData]) -> list[str] | None:
    """The spec's plot kinds, and energy_vs_speed when a run measured energy (`run --energy` on a spec that names
    its plots without it: the energy figures asked for on the command line get their plot too)."""
    if kinds is None or "energy_vs_speed" in kinds:
        return kinds
    measured = any("energy_j_per_gemm" in rows and rows["energy_j_per_gemm"].notna().any() for _, rows in runs)
    return [*kinds, "energy_vs_speed"] if measured else kinds


def _plots_of_unchanged_spec(receipt: dict) -> list[str] | None:
    from ..errors import GemmCompareError
    from ..spec import load_spec

    path = receipt.get("spec")
    if not path or not receipt.get("spec_hash") or not Path(path).is_file():
        return None
    try:
        exp = load_spec(path)
    except (GemmCompareError, OSError):
        return None
    return list(exp.report.plots) if exp.spec_hash == receipt["spec_hash"] else None


def _build(runs: list[RunData], out: Path, title: str | None, plots: list[str] | None, across: str | None,
           progress: Progress) -> Report:
    out.mkdir(parents=True, exist_ok=True)
    with progress.step("summary") as step:
        rows = combine_runs(runs)
        summary = summary_table(rows)
        step.done = f"summary of {len(summary)} rows"
    title = title or _default_title(runs, rows)
    with progress.step("plots") as step:
        figures = make_plots(rows, out, plots, progress) if len(rows) else []
        step.done = f"drew {sum(1 for p in figures if not p.skipped)} figure(s)"
    report = Report(out, title, summary, figures)
    with _saying_saved(progress) as saved:
        with progress.step("markdown") as step:
            report.csv = write_csv(summary, out / "summary.csv")
            sections = _markdown(report, runs, rows, across, progress)  # its rooflines wait for the pool
            step.done = f"wrote {report.markdown.name} and {report.csv.name}"
        if saved is not None:
            with progress.step("saving") as step:
                rendering.wait_all()
                step.done = f"saved {saved.count} figure(s)"
        with progress.step("html") as step:
            _html_page(report, runs, *sections)
            step.done = f"wrote {report.html}"
    return report


@contextmanager
def _saying_saved(progress: Progress):
    """Each figure the pool writes said as it is found written (rendering.saying), whichever step waits for it;
    None where figures are saved as they are drawn (no pool)."""
    if not rendering.running():
        yield None
        return
    with progress.items(None, "saving figures", unit="fig") as items, rendering.saying(
            lambda paths: items.done(f"saved {paths[0].stem}" + "/".join(p.suffix for p in paths))):
        yield items


def _markdown(report: Report, runs: list[RunData], rows: pd.DataFrame, across: str | None,
              progress: Progress) -> tuple:
    """report.md; returns the sections the HTML shares with it (across contracts, oracle picks, energy ranking,
    grouped problems, predictions), each computed once for both pages (None where the run has none)."""
    out, title, summary, figures = report.out_dir, report.title, report.summary, report.plots
    md = [f"# {title}\n", _status_line(summary) + "\n", "## Summary\n", summary_markdown(summary), "## Plots\n"]
    for p in figures:
        if p.skipped:
            md.append(f"- not drawn: {p.title}: {p.skipped}")
        else:
            md.append(f"![{p.title}]({p.png.name})\n\n_{p.title}. {p.caption}_\n")
    md.append("\n## Results\n")
    md.append(RESULTS_NOTE + "\n")
    md.append(tables_markdown(summary, heading="###"))
    side_by_side = across_section(summary, across)  # other contracts beside the `across` one
    if side_by_side is not None:
        md.append(side_by_side.markdown)
        report.across_csv = write_csv(side_by_side.table, out / "across.csv")
    picks = picks_section(summary)  # an oracle run: each tuned row's pick beside its candidates' true best
    if picks is not None:
        md.append(picks.markdown)
    ranking = energy_ranking_section(summary)  # rows with energy: where the faster row uses more energy
    if ranking is not None:
        md.append(ranking.markdown)
    grouped = grouped_section(rows)  # grouped problems (their `grouped` records): each kind against the best library row
    if grouped is not None:
        md.append(grouped.markdown)
    predicted = predictions_section(rows, out, progress=progress)  # the model's time beside the measured one
    md.append(predicted.markdown)
    for receipt, _ in runs:
        md.append(f"\n## Receipt: {run_label(receipt)} ({gpu_name(receipt) or 'unknown GPU'})\n")
        md.append(receipt_markdown(receipt))
    report.markdown = out / "report.md"
    report.markdown.write_text("\n".join(md) + "\n")
    return side_by_side, picks, ranking, grouped, predicted


def _html_page(report: Report, runs: list[RunData], side_by_side, picks, ranking, grouped, predicted) -> None:
    summary, figures = report.summary, report.plots
    body = [f"<p>{_html.escape(_status_line(summary))}</p>", "<h2>Summary</h2>", summary_html(summary),
            "<h2>Plots</h2>", figures_html(figures),
            "<h2>Results</h2>", f"<p>{_html.escape(RESULTS_NOTE)}</p>",
            tables_html(summary), *(s.html for s in (side_by_side, picks, ranking, grouped) if s is not None),
            predicted.html]
    for receipt, _ in runs:
        body.append(f"<h2>Receipt: {_html.escape(run_label(receipt))} "
                    f"({_html.escape(gpu_name(receipt) or 'unknown GPU')})</h2>")
        body.append(receipt_html(receipt))
    report.html = report.out_dir / "report.html"
    report.html.write_text(page(report.title, "\n".join(body)))


def _from_store(run_id: str, store: Any) -> RunData:
    from ..store import DEFAULT_STORE, Store, load_source

    if isinstance(store, Store):
        run = store.find_run(run_id)
        if run is None:
            raise ValueError(f"no run '{run_id}' in {store.path}")
        receipt = dict(run["receipt"] or {}, run_id=run["run_id"])
        return receipt, store.results(run["run_id"])
    return load_source(run_id, store or DEFAULT_STORE).pair


def _status_line(summary: pd.DataFrame) -> str:
    counts = summary["status"].value_counts()
    parts = ", ".join(f"{counts[s]} {s}" for s in counts.index)
    return f"{len(summary)} result rows: {parts or 'none'}."

