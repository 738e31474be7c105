"""The dashboard's static site: index.html (GPUs x specs, each cell the latest run's verdict against the run
before it), a page per (GPU, spec) with that comparison, a page per (GPU, contract, problem) with every
implementation's series, and a page per (contract, problem) measured on several GPUs with them side by side.
Plain HTML and PNG: no script but the tables' sorter, nothing fetched from the network."""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from ..verdicts import VERDICT_ORDER, Comparison, display_comparison
from ..receipt import DEFAULT_COMPARE_THRESHOLD, compare_threshold
from ..report import rendering
from ..report.data import problem_sort_key
from ..report.html import page
from ..files import slug
from ..report.writers import cells_table, html_table
from .plots import plot_across, plot_series
from .runs import Run, find_runs
from .series import METRICS, Series, build_series
from .steps import flagged, latest_comparison

PROGRESS_FROM = 10  # pages; fewer are drawn without a progress bar
NOTEWORTHY = ("REGRESSION", "SLOWER", "UNKNOWN", "FASTER", "FIXED")  # a verdict cell is coloured by the first


@dataclass
class Dashboard:
    out: Path
    runs: list[Run]
    pages: list[Path] = field(default_factory=list)  # every page written, index first

    @property
    def index(self) -> Path:
        return self.out / "index.html"

    @property
    def series_pages(self) -> list[Path]:
        return [p for p in self.pages if p.parent.name == "series"]


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _link(href: str, text: str) -> str:
    return f"<a href='{_e(href)}'>{_e(text)}</a>"


def verdict_counts(comp: Comparison | None) -> tuple[str, str | None]:
    """('1 SLOWER, 40 SAME', 'verdict-SLOWER') for a comparison; ('first run', None) without one."""
    if comp is None:
        return "first run: nothing to compare with", None
    counts = comp.counts
    worst = next((v for v in NOTEWORTHY if v in counts), None)
    return ", ".join(f"{n} {v}" for v, n in counts.items()), f"verdict-{worst}" if worst else None


def _unique_names(keys: Iterable[tuple], prefix: str) -> dict[tuple, str]:
    out, used = {}, set()
    for key in keys:
        name = slug("__".join(key)) or prefix
        stem, i = name, 2
        while name in used:
            name, i = f"{stem}_{i}", i + 1
        used.add(name)
        out[key] = name
    return out


# -- pages --------------------------------------------------------------------------------------------------

def _runs_table(runs: list[Run]) -> str:
    rows = [[str(i), _e(r.started_at[:19].replace("T", " ")), _e(r.commit[:10] + (" (dirty)" if r.dirty else "")),
             _e(r.spec), _e(r.run_id), str(len(r.rows)), _e(r.source)] for i, r in enumerate(runs)]
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


def series_page(s: Series, out: Path, name: str, threshold: float) -> Path:
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
    rows, css = [], []
    for _, p in latest.sort_values("value", ascending=False, na_position="last").iterrows():
        n_runs = int((s.points["implementation"] == p["implementation"]).sum())
        verdict = last_step["verdict"].get(p["implementation"], "")
        ci = f"{p['lo']:.4g} – {p['hi']:.4g}" if np.isfinite(p["lo"]) else ""
        rows.append([_e(p["implementation"]) + (" <em>(baseline)</em>" if p["is_baseline"] else ""), str(n_runs),
                     _e(f"#{p['x']} {p['label']}"), _e(p["status"]), f"{p['value']:.4g}" if np.isfinite(p["value"]) else "", ci,
                     _e(verdict)])
        css.append([None] * 6 + [f"verdict-{verdict}" if verdict in NOTEWORTHY else None])
    body += ["<h2>Implementations (latest run of each)</h2>",
             cells_table(["implementation", "runs", "latest run", "status", METRICS[s.metric], "95% CI",
                          "vs its previous run"], rows,
                         numeric=[False, True, False, False, True, False, False], css=css),
             "<h2>Runs</h2>", _runs_table(s.runs)]
    path = out / f"{name}.html"
    path.write_text(page(f"{s.gpu} — {s.contract} {s.problem}", "\n".join(body)))
    return path


def spec_page(gpu: str, spec: str, runs: list[Run], comp: Comparison | None, links: list[tuple[str, str]],
              out: Path, name: str) -> Path:
    body = [f"<p>{_link('../index.html', 'index')} · {len(runs)} runs of spec {_e(spec)} on {_e(gpu)}</p>",
            "<h2>Latest run against the one before it</h2>"]
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
             "<h2>Runs</h2>", _runs_table(runs)]
    path = out / f"{name}.html"
    path.write_text(page(f"{gpu} — {spec}", "\n".join(body)))
    return path


def across_page(series: list[Series], out: Path, name: str) -> Path:
    png = plot_across(series, out, name)
    s0 = series[0]
    note = ("" if s0.metric == "pct_of_peak" else
            "<p class='note'>Raw TFLOP/s: GPUs of different sizes are compared fairly with --normalize peak.</p>")
    body = [f"<p>{_link('../index.html', 'index')} · {len(series)} GPUs</p>", note,
            f"<figure><img src='{_e(png.name)}' alt='{_e(s0.contract + ' ' + s0.problem)}'></figure>"]
    path = out / f"{name}.html"
    path.write_text(page(f"{s0.contract} {s0.problem} across GPUs", "\n".join(body)))
    return path


def index_page(d: Dashboard, specs: dict, comps: dict, spec_names: dict, series: dict, series_names: dict,
               across_names: dict, metric: str, threshold: float | None) -> Path:
    gpus = sorted({g for g, _ in specs})
    spec_list = sorted({s for _, s in specs})
    rows, css = [], []
    for spec in spec_list:
        row, row_css = [_e(spec)], [None]
        for gpu in gpus:
            runs = specs.get((gpu, spec))
            if not runs:
                row.append("")
                row_css.append(None)
                continue
            text, cls = verdict_counts(comps[(gpu, spec)])
            row.append(_link(f"spec/{spec_names[(gpu, spec)]}.html", f"{len(runs)} run{'s' if len(runs) > 1 else ''}, latest {runs[-1].label}")
                       + f"<br>{_e(text)}")
            row_css.append(cls)
        rows.append(row)
        css.append(row_css)
    threshold_text = f"{100 * threshold:g}%" if threshold else (f"each spec's own, else {100 * DEFAULT_COMPARE_THRESHOLD:g}%")
    body = [f"<p>{len(d.runs)} runs on {len(gpus)} GPU(s), {len(spec_list)} specs. Each cell: the latest run of the "
            f"spec on that GPU against the run before it, by the verdict of <code>gemmcompare compare</code> "
            f"(threshold {_e(threshold_text)}). Series pages show {_e(METRICS[metric])}.</p>",
            "<h2>GPUs × specs</h2>", cells_table(["spec"] + gpus, rows, css=css)]
    for gpu in gpus:
        rows, css = [], []
        keys = [k for k in series if k[0] == gpu]
        for key in sorted(keys, key=lambda k: (k[1], problem_sort_key(k[2]))):
            s = series[key]
            flags = flagged(s.steps)
            last = flags[flags["x"] == len(s.runs) - 1]
            latest = ", ".join(f"{n} {v}" for v, n in last["verdict"].value_counts().items())
            rows.append([_e(key[1]), _link(f"series/{series_names[key]}.html", key[2]), str(len(s.runs)),
                         str(s.points["implementation"].nunique()), str(len(flags)), _e(latest)])
            css.append([None] * 5 + [f"verdict-{last['verdict'].iloc[0]}" if len(last) else None])
        body += [f"<h2>Series on {_e(gpu)}</h2>",
                 cells_table(["contract", "problem", "runs", "implementations", "flagged steps",
                              "flagged in the latest run"], rows,
                             numeric=[False, False, True, True, True, False], css=css)]
    if across_names:
        body += ["<h2>Across GPUs</h2>", "<ul>" + "".join(
            f"<li>{_link(f'across/{name}.html', f'{c} {p}')}</li>" for (c, p), name in across_names.items()) + "</ul>"]
    path = d.out / "index.html"
    path.write_text(page("gemmcompare dashboard", "\n".join(body)))
    return path


# -- the whole site -----------------------------------------------------------------------------------------

def build_dashboard(paths: Iterable, out: str | Path, *, metric: str = "tflops", threshold: float | None = None,
                    progress: bool = True) -> Dashboard:
    """Find every run under `paths` (runs.find_runs) and write the site into `out`. metric: 'tflops', or
    'pct_of_peak' (each GPU's datasheet peak for the contract's math); threshold: the smallest change that
    counts (default: each later run's spec's, else compare's default)."""
    from tqdm import tqdm

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}, got {metric!r}")
    d = Dashboard(Path(out), find_runs(paths))
    for sub in ("spec", "series", "across"):
        (d.out / sub).mkdir(parents=True, exist_ok=True)
    specs: dict[tuple[str, str], list[Run]] = {}
    for run in d.runs:
        specs.setdefault((run.gpu, run.spec), []).append(run)
    keys = sorted({(run.gpu, str(c), str(p)) for run in d.runs
                   for c, p in run.rows[["contract", "problem"]].drop_duplicates().itertuples(index=False)})
    series_names = _unique_names(keys, "series")
    spec_names = _unique_names(sorted(specs), "spec")
    on_gpus: dict[tuple[str, str], list[str]] = {}
    for gpu, c, p in keys:
        on_gpus.setdefault((c, p), []).append(gpu)
    across = {cp: gpus for cp, gpus in on_gpus.items() if len(gpus) > 1}
    across_names = _unique_names(sorted(across), "across")
    total = len(keys) + len(specs) + len(across) + 1
    bar = tqdm(total=total, desc="dashboard", unit="page", file=sys.stderr, dynamic_ncols=True,
               disable=not progress or total < PROGRESS_FROM)
    series: dict[tuple[str, str, str], Series] = {}
    # Every series page draws a figure: saved on a pool of processes (report/rendering.py) while this one builds
    # the next series, they cost the wall time of one core's share instead of all of it.
    ours = not rendering.running() and rendering.prestart()
    try:
        with rendering.saving_in_parallel():
            _series_pages(d, keys, series, series_names, metric, threshold, bar)
    finally:
        if ours:
            rendering.shutdown()
    comps = {}

    for (gpu, spec), runs in specs.items():
        comps[(gpu, spec)] = latest_comparison(runs, threshold)
        pairs = {(str(c), str(p)) for r in runs for c, p in r.rows[["contract", "problem"]].itertuples(index=False)}
        links = [(f"{c} {p}", f"../series/{series_names[(gpu, c, p)]}.html")
                 for c, p in sorted(pairs, key=lambda cp: (cp[0], problem_sort_key(cp[1])))]
        d.pages.append(spec_page(gpu, spec, runs, comps[(gpu, spec)], links, d.out / "spec", spec_names[(gpu, spec)]))
        bar.update()
    for cp, gpus in across.items():
        d.pages.append(across_page([series[(g, *cp)] for g in gpus], d.out / "across", across_names[cp]))
        bar.update()
    d.pages.insert(0, index_page(d, specs, comps, spec_names, series, series_names, across_names, metric, threshold))
    bar.update()
    bar.close()
    return d


def _series_pages(d: Dashboard, keys, series: dict, series_names: dict, metric: str, threshold, bar) -> None:
    for key in keys:
        gpu, contract, problem = key
        s = build_series([r for r in d.runs if r.gpu == gpu], gpu, contract, problem, metric, threshold)
        series[key] = s
        shown = compare_threshold(s.runs[-1].receipt, threshold)  # the band drawn: the latest run's
        d.pages.append(series_page(s, d.out / "series", series_names[key], shown))
        bar.update()
