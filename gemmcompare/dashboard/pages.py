"""The dashboard's HTML pages: the index (specs and their purposes by GPUs, each cell the latest run's verdict
against the previous run of its group; the series of each GPU), a page per group of runs (GPU, spec, purpose),
a page per series (GPU, contract, problem) and a page per (contract, problem) measured on several GPUs.
Plain HTML and PNG: no script but the tables' sorter, nothing fetched from the network."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..verdicts import VERDICT_ORDER, Comparison, display_comparison
from ..receipt import DEFAULT_COMPARE_THRESHOLD
from ..report.html import page
from ..report.writers import cells_table, html_table
from .runs import Run
from .series import METRICS, Series
from .steps import flagged

NOTEWORTHY = ("REGRESSION", "SLOWER", "UNKNOWN", "FASTER", "FIXED")  # a verdict cell is coloured by the first


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _link(href: str, text: str) -> str:
    return f"<a href='{_e(href)}'>{_e(text)}</a>"


def _write(path: Path, title: str, body: list[str]) -> Path:
    path.write_text(page(title, "\n".join(body)))
    return path


def verdict_counts(comp: Comparison | None) -> tuple[str, str | None]:
    """('1 SLOWER, 40 SAME', 'verdict-SLOWER') for a comparison; ('first run ...', None) without one."""
    if comp is None:
        return "first run: nothing to compare with", None
    counts = comp.counts
    worst = next((v for v in NOTEWORTHY if v in counts), None)
    return ", ".join(f"{n} {v}" for v, n in counts.items()), f"verdict-{worst}" if worst else None


def _runs_table(runs: list[Run], run_rows: dict[str, int]) -> str:
    rows = [[str(i), _e(r.started_at[:19].replace("T", " ")), _e(r.commit[:10] + (" (dirty)" if r.dirty else "")),
             _e(r.spec), _e(r.run_id), str(run_rows.get(r.run_id, len(r.table))), _e(r.source)]
            for i, r in enumerate(runs)]
    return cells_table(["#", "date", "commit", "spec", "run id", "rows", "source"], rows,
                       numeric=[True, False, False, False, False, True, False])


def _steps_table(steps, runs: list[Run]) -> str:
    number = {r.run_id: f"#{i} {r.label}" for i, r in enumerate(runs)}  # runs of one date and commit differ by #
    rows, css = [], []
    for _, st in steps.iterrows():
        ratio = st["ratio"]
        rows.append([_e(st["verdict"]), _e(st["implementation"]), _e(number[st["base_run"]]), _e(number[st["cand_run"]]),
                     f"{ratio:.3f}" if isinstance(ratio, float) and np.isfinite(ratio) else "",
                     _e(st["detail"]), _e(st["throttled"] or "")])
        css.append([f"verdict-{st['verdict']}"] + [None] * 6)
    return cells_table(["verdict", "implementation", "from", "to", "ratio", "detail", "throttled"], rows,
                       numeric=[False, False, False, False, True, False, False], css=css)


def series_page(s: Series, out: Path, name: str, threshold: float, run_rows: dict[str, int]) -> Path:
    from .plots import plot_series  # matplotlib loads only where a figure is drawn

    png, caption = plot_series(s, out, name, threshold)
    flags = flagged(s.steps)
    body = [f"<p>{_link('../index.html', 'index')} · {len(s.runs)} runs · {s.points['implementation'].nunique()} "
            f"implementations · threshold {100 * threshold:g}% · {_e(METRICS[s.metric])}</p>",
            f"<figure><img src='{_e(png.name)}' alt='{_e(s.contract + ' ' + s.problem)}'>"
            f"<figcaption>{_e(caption)}</figcaption></figure>",
            f"<h2>Flagged steps ({len(flags)})</h2>"]
    body.append(_steps_table(flags.sort_values("x", ascending=False), s.runs) if len(flags)
                else "<p>No step between consecutive runs is SLOWER, FASTER, REGRESSION or FIXED.</p>")
    latest = s.points.sort_values("x").drop_duplicates("implementation", keep="last")
    last_step = s.steps.sort_values("x").drop_duplicates("implementation", keep="last").set_index("implementation")
    runs_of = s.points["implementation"].value_counts()
    rows, css = [], []
    for _, p in latest.sort_values("value", ascending=False, na_position="last").iterrows():
        verdict = last_step["verdict"].get(p["implementation"], "")
        ci = f"{p['lo']:.4g} – {p['hi']:.4g}" if np.isfinite(p["lo"]) else ""
        rows.append([_e(p["implementation"]) + (" <em>(baseline)</em>" if p["is_baseline"] else ""),
                     str(int(runs_of[p["implementation"]])), _e(f"#{p['x']} {p['label']}"), _e(p["status"]),
                     f"{p['value']:.4g}" if np.isfinite(p["value"]) else "", ci, _e(verdict)])
        css.append([None] * 6 + [f"verdict-{verdict}" if verdict in NOTEWORTHY else None])
    body += ["<h2>Implementations (latest run of each)</h2>",
             cells_table(["implementation", "runs", "latest run", "status", METRICS[s.metric], "95% CI",
                          "vs its previous run"], rows,
                         numeric=[False, True, False, False, True, False, False], css=css),
             "<h2>Runs</h2>", _runs_table(s.runs, run_rows)]
    return _write(out / f"{name}.html", f"{s.gpu} — {s.contract} {s.problem}", body)


def group_page(gpu: str, spec: str, label: str, scope: str, runs: list[Run], run_rows: dict[str, int],
               comp: Comparison | None, links: list[tuple[str, str]], others: list[tuple[str, str]], out: Path,
               name: str) -> Path:
    """The page of one group of runs of a spec on a GPU (purpose.py): its latest run against the one before."""
    body = [f"<p>{_link('../index.html', 'index')} · {len(runs)} runs of spec {_e(spec)} on {_e(gpu)}, "
            f"purpose <strong>{_e(label)}</strong>: {_e(scope)} in the latest run</p>"]
    if others:
        body.append("<p class='note'>Other runs of this spec on this GPU measured other rows or measured them "
                    "otherwise, and are compared only among themselves: "
                    + "; ".join(_link(href, text) for text, href in others) + ".</p>")
    body.append("<h2>Latest run against the one before it</h2>")
    if comp is None:
        body.append("<p>Only one run: nothing to compare with yet.</p>")
    else:
        body.append(f"<pre>{_e(comp.summary_text(max_lines=0))}</pre>")
        shown = comp.table[~comp.table["verdict"].isin(["SAME", "NEW", "GONE"])]
        body.append(html_table(display_comparison(shown), lambda t: f"verdict-{t}" if t in VERDICT_ORDER else None)
                    if len(shown) else "<p>Every row measured in both runs is SAME.</p>")
        counts = comp.counts
        if counts.get("NEW") or counts.get("GONE"):
            body.append(f"<p class='note'>Not listed: {counts.get('NEW', 0)} rows NEW (only in the latest run) and "
                        f"{counts.get('GONE', 0)} GONE (only in the one before); the spec changed between them.</p>")
    body += ["<h2>Series</h2>", "<ul>" + "".join(f"<li>{_link(href, text)}</li>" for text, href in links) + "</ul>",
             "<h2>Runs</h2>", _runs_table(runs, run_rows)]
    title = f"{gpu} — {spec}" + ("" if label == "main" else f" ({label.split(':')[0]})")
    return _write(out / f"{name}.html", title, body)


def across_page(series: list[Series], out: Path, name: str) -> Path:
    from .plots import plot_across

    png = plot_across(series, out, name)
    s0 = series[0]
    note = ("" if s0.metric == "pct_of_peak" else
            "<p class='note'>Raw TFLOP/s: GPUs of different sizes are compared fairly with --normalize peak.</p>")
    body = [f"<p>{_link('../index.html', 'index')} · {len(series)} GPUs</p>", note,
            f"<figure><img src='{_e(png.name)}' alt='{_e(s0.contract + ' ' + s0.problem)}'></figure>"]
    return _write(out / f"{name}.html", f"{s0.contract} {s0.problem} across GPUs", body)


@dataclass
class GroupCell:
    """What the index shows of one group: its page, run count, latest run and verdict (group_page's)."""
    gpu: str
    spec: str
    label: str
    href: str
    runs: int
    latest: str
    verdict: str
    css: str | None


@dataclass
class SeriesRow:
    """What the index shows of one series: its page and the flags series_page found."""
    gpu: str
    contract: str
    problem: str
    href: str
    runs: int
    implementations: int
    flagged: int
    latest: list  # [[verdict, count], ...] flagged in the latest run


def index_page(out: Path, n_runs: int, cells: list[GroupCell], series: list[SeriesRow], across: list[tuple[str, str]],
               metric: str, threshold: float | None, problem_key) -> Path:
    gpus = sorted({c.gpu for c in cells})
    by_row: dict[tuple[str, str], dict[str, GroupCell]] = {}
    for c in sorted(cells, key=lambda c: (c.spec, c.label != "main", c.label)):
        by_row.setdefault((c.spec, c.label), {})[c.gpu] = c
    rows, css = [], []
    for (spec, label), on in by_row.items():
        row, row_css = [_e(spec), _e(label)], [None, None]
        for gpu in gpus:
            c = on.get(gpu)
            row.append("" if c is None else _link(c.href, f"{c.runs} run{'s' if c.runs > 1 else ''}, latest {c.latest}")
                       + f"<br>{_e(c.verdict)}")
            row_css.append(None if c is None else c.css)
        rows.append(row)
        css.append(row_css)
    threshold_text = f"{100 * threshold:g}%" if threshold else f"each spec's own, else {100 * DEFAULT_COMPARE_THRESHOLD:g}%"
    specs = len({c.spec for c in cells})
    body = [f"<p>{n_runs} runs on {len(gpus)} GPU(s), {specs} specs. Each cell: the latest run of the spec on that "
            f"GPU against the previous run of the same purpose, by the verdict of <code>gemmcompare compare</code> "
            f"(threshold {_e(threshold_text)}). Series pages show {_e(METRICS[metric])}.</p>",
            "<p class='note'>Purpose: <strong>main</strong> is a spec's series of widest runs; a run that measured "
            "fewer rows or other rows (<strong>part</strong>: some of the main's rows; <strong>other</strong>: rows "
            "the main does not have, or another L2 policy), or that <code>run</code> narrowed "
            "(<strong>narrowed</strong>: --shapes, --only, --check-only, --l2, as its receipt records), is compared "
            "only with the runs of its own purpose. A run continues a purpose when it measured at least every row "
            "that purpose's latest run did.</p>",
            "<h2>GPUs × specs</h2>", cells_table(["spec", "purpose"] + gpus, rows, css=css)]
    for gpu in gpus:
        rows, css = [], []
        for s in sorted((s for s in series if s.gpu == gpu), key=lambda s: (s.contract, problem_key(s.problem))):
            latest = ", ".join(f"{n} {v}" for v, n in s.latest)
            rows.append([_e(s.contract), _link(s.href, s.problem), str(s.runs), str(s.implementations), str(s.flagged),
                         _e(latest)])
            worst = next((v for v in NOTEWORTHY if any(v == w for w, _ in s.latest)), None)
            css.append([None] * 5 + [f"verdict-{worst}" if worst else None])
        body += [f"<h2>Series on {_e(gpu)}</h2>",
                 cells_table(["contract", "problem", "runs", "implementations", "flagged steps",
                              "flagged in the latest run"], rows,
                             numeric=[False, False, True, True, True, False], css=css)]
    if across:
        body += ["<h2>Across GPUs</h2>", "<ul>" + "".join(f"<li>{_link(href, text)}</li>" for text, href in across)
                 + "</ul>"]
    return _write(out / "index.html", "gemmcompare dashboard", body)
