"""What every report plot shares: the Plot record, saving (PNG and SVG), one colour and marker per
implementation, legend labels, the legend or key table, the problem axis, and grouped bars wrapped into rows.

matplotlib without pyplot and without a global backend change: each figure is drawn on its own Agg canvas.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, NullFormatter

from ..data import kind_of, sorted_problems  # noqa: F401  (kind_of: for the plot modules)
from ..labels import legend_labels, wrap
from ... import files
from ...grouped import label_volume
from .. import rendering

# the baseline is drawn black, dashed, with square markers *under* the others, so a kernel that matches it
# stays visible on top
BASELINE_STYLE = dict(color="black", linestyle="--", linewidth=2.2, marker="s", markersize=7, zorder=2)
PASS_ONLY_NOTE = "only PASS rows are drawn: a wrong result has no meaningful speed"
CI_NOTE = "error bars: 95% CI of the median from the raw samples (distribution-free)"
NOT_DRAWN = ("SKIP", "BUILD_ERROR")  # rows with nothing to draw in any plot
MARKERS = ("o", "^", "D", "v", "P", "X", "<", ">", "h", "p")
LEGEND_RIGHT_MAX = 14  # more entries than this go into a key table under the plot
DPI = 120
KIND_COLORS = {"library": "#455a64", "CUTLASS": "#1565c0", "hand-written": "#ef6c00", "custom": "#6a1b9a"}
# grouped bars (a group a problem) too many for one row of WIDTH_MAX_IN are wrapped into rows (problem_rows)
SLOT_IN = 0.16  # one bar with its number written up it (6.5 pt, turned): the narrowest that reads
GROUP_FILL = 0.8  # of a problem's slot, the part its bars take
AXES_SHARE = 0.775  # of the figure's width, the part the axes take (matplotlib's default margins)
WIDTH_MAX_IN = 16.0
ROW_IN = 3.3
ROW_AXES_IN = 2.4  # of a wrapped row, the axes' own height (the labels under it get what they need besides)


@dataclass
class Plot:
    """One figure of a report, or the note of why it was not drawn."""

    kind: str
    title: str
    files: list[Path] = field(default_factory=list)  # [png, svg]
    skipped: str | None = None
    caption: str = ""

    @property
    def png(self) -> Path | None:
        return next((f for f in self.files if f.suffix == ".png"), None)

    @property
    def svg(self) -> Path | None:
        return next((f for f in self.files if f.suffix == ".svg"), None)


def save_figure(fig: Figure, out_dir: Path, stem: str, formats=("png", "svg")) -> list[Path]:
    """Write fig as out_dir/<stem>.png and .svg (write_figure), here or, while a report saves in parallel,
    on a worker process (rendering.py: read a file only after rendering.wait_for(path))."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{files.slug(stem)}.{fmt}" for fmt in formats]
    if not rendering.submit(fig, paths, write_figure):
        write_figure(fig, paths)
    return paths


def write_figure(fig: Figure, paths: list[Path]) -> None:
    """Save fig in each path's format. SVG ids are salted, its date left out and its text kept as text (not
    glyph outlines), so re-rendering the same data gives the same, small file (committed reports diff
    cleanly); the PNG is reduced to an adaptive 256-colour palette (a third of the bytes) where that palette keeps
    every colour the figure draws (_save_png)."""
    with matplotlib.rc_context({"svg.hashsalt": "gemmcompare", "svg.fonttype": "none"}):
        for path in paths:
            if path.suffix == ".png":
                _save_png(fig, path)
            else:
                fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Date": None} if path.suffix == ".svg" else None)


def _save_png(fig: Figure, path: Path) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    try:
        from PIL import Image
    except ImportError:  # matplotlib needs Pillow, but a PNG as it is will do
        path.write_bytes(buffer.getvalue())
        return
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    reduced = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    # Median cut spends its colours by area: a colour drawn only in small markers (an implementation on a
    # roofline) can be merged into a neighbour, and two implementations then share one colour (tab10's orange
    # became its red). Only a palette that keeps every drawn colour will do; otherwise the PNG stays as it is.
    (reduced if keeps_drawn_colours(image, reduced) else image).save(path, optimize=True)


DRAWN_PIXELS = 40  # an implementation's colour on at least this many pixels is drawn (a 5 pt marker is ~100)
COLOUR_TOLERANCE = 12.0  # the largest RGB distance from a drawn colour to its palette entry that looks the same


def keeps_drawn_colours(image, reduced) -> bool:
    """Whether the 256-colour `reduced` keeps, within COLOUR_TOLERANCE, every implementation colour (Palette's
    tab10) that `image` draws on DRAWN_PIXELS or more. (Only those: the blends of anti-aliased edges are many
    shades of their own, and a palette may approximate them.)"""
    rgb = np.asarray(image, dtype=np.int32).reshape(-1, 3)
    packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    wanted = [c for c in IMPLEMENTATION_RGB if np.count_nonzero(packed == (c[0] << 16 | c[1] << 8 | c[2])) >= DRAWN_PIXELS]
    if not wanted:
        return True
    palette = np.asarray(reduced.getpalette()[: 3 * 256], dtype=float).reshape(-1, 3)
    drawn = np.asarray(wanted, dtype=float)
    nearest = np.sqrt(((drawn[:, None, :] - palette[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return bool((nearest <= COLOUR_TOLERANCE).all())


def device(rows: pd.DataFrame) -> str:
    names = [g for g in dict.fromkeys(rows.get("gpu", pd.Series(dtype=str))) if g]
    return " vs ".join(names) if names else "unknown GPU"


def contract_groups(rows: pd.DataFrame):
    for contract in dict.fromkeys(rows["contract"]):
        yield contract, rows[rows["contract"] == contract]


def finite(values) -> np.ndarray:
    arr = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    return arr[np.isfinite(arr)]


def passing(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """PASS rows with a finite `column`, one per (gpu, problem, implementation): the last one written."""
    ok = rows[(rows["status"] == "PASS") & pd.to_numeric(rows[column], errors="coerce").notna()]
    return ok.drop_duplicates(["gpu", "problem", "implementation"], keep="last")


def impl_order(rows: pd.DataFrame) -> list[str]:
    """Baseline first, then the others by name: the same order in every legend of a report."""
    base = list(dict.fromkeys(rows.loc[rows["is_baseline"], "implementation"]))
    rest = sorted(n for n in set(rows["implementation"]) if n not in base)
    return base + rest


def is_baseline(rows: pd.DataFrame, name: str) -> bool:
    return bool(rows.loc[rows["implementation"] == name, "is_baseline"].any())


# Palette's colours, one an implementation (in turn), and as the PNG holds them (8-bit RGB), which its writer
# must keep apart (_save_png)
IMPLEMENTATION_COLOURS = [matplotlib.colormaps["tab10"](i) for i in range(10)]
IMPLEMENTATION_RGB = [tuple(int(round(v * 255)) for v in colour[:3]) for colour in IMPLEMENTATION_COLOURS]


class Palette:
    """One colour and marker per implementation of a contract's rows, the same in every plot of the report
    (whatever each plot leaves out), and its legend label (never cut: tile, cluster, schedule, stages stay)."""

    def __init__(self, rows: pd.DataFrame):
        shown = rows[~rows["status"].isin(NOT_DRAWN)]
        names = impl_order(shown if len(shown) else rows)
        self.baselines = {n for n in names if is_baseline(rows, n)}
        others = [n for n in names if n not in self.baselines]
        self.color = {n: IMPLEMENTATION_COLOURS[i % len(IMPLEMENTATION_COLOURS)] for i, n in enumerate(others)}
        self.marker = {n: MARKERS[(i // 10) % len(MARKERS)] for i, n in enumerate(others)}
        short = legend_labels(names)
        self.label = {n: short[n] + (" (baseline)" if n in self.baselines else "") for n in names}

    def style(self, name: str, line: bool = True) -> dict:
        if name in self.baselines:
            style = dict(BASELINE_STYLE)
        else:
            style = dict(color=self.color.get(name, "grey"), linestyle="-", linewidth=1.5,
                         marker=self.marker.get(name, "o"), markersize=5, zorder=3)
        if not line:
            style["linestyle"] = "none"
        return style

    def text(self, name: str) -> str:
        return self.label.get(name, name)


def legend(fig: Figure, ax, handles: list, labels: list[str], title: str = "implementation") -> str:
    """The legend beside the axes when it fits (up to LEGEND_RIGHT_MAX entries, wrapped labels), else a key
    table under the plot in as many columns as the figure's width takes. Labels are never cut.
    Returns 'right', 'below' or '' (nothing to show)."""
    if not handles:
        return ""
    wrapped = [wrap(label) for label in labels]
    lines = sum(w.count("\n") + 1 for w in wrapped)
    height = fig.get_figheight()
    if len(handles) <= LEGEND_RIGHT_MAX and lines * 0.17 <= height * 1.1:
        ax.legend(handles, wrapped, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                  title=title, title_fontsize=8)
        return "right"
    widest = max(len(line) for w in wrapped for line in w.split("\n"))
    ncol = max(1, min(4, int(fig.get_figwidth() / (0.068 * widest + 0.5))))
    fig.legend(handles, wrapped, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=7.5, frameon=True,
               ncol=ncol, title=f"key: {title}", title_fontsize=8, columnspacing=1.2, handletextpad=0.5)
    return "below"


_GROUPED_SPLIT = re.compile(r"^(g\d+ n\d+ k\d+) ")  # a grouped label's shape, then its rows
LABEL_LINE_IN = 0.14  # a line of 8-point tick label, in inches
LABEL_CHAR_IN = 0.075  # a character of 8-point tick label along its line, in inches
GROUPED_AXIS_LABEL = ("grouped problem: g groups, n N, k K; t tokens, top-k, routing, seed "
                      "(by size; a category each)")


def _shown_labels(problems: list[str]) -> tuple[list[str], bool]:
    """(the problems' tick labels, whether they are all grouped): a grouped label (`g256 n7168 k2048 t512 top8
    zipf1.2 s0`) goes on two lines, the shape and then the routing, when every problem is grouped; else as given."""
    grouped = bool(problems) and all(label_volume(p) is not None for p in problems)
    return ([_GROUPED_SPLIT.sub(r"\1\n", p, count=1) for p in problems] if grouped else list(problems)), grouped


def _longest_line_in(shown: list[str]) -> float:
    """The longest line of the tick labels, in inches along it (turned upright: the room it takes below the axes)."""
    return max((len(line) for p in shown for line in p.split("\n")), default=0) * LABEL_CHAR_IN


def problem_axis(ax, problems: list[str], axis: str = "x", slots: int | None = None) -> None:
    """A categorical axis of problems (no lines join them: they are different shapes), tick labels turned
    when they would touch. slots: the places on the axis, when more than the problems (a short last row of
    wrapped rows keeps the others' scale)."""
    positions = np.arange(len(problems))
    if axis == "x":
        shown, grouped = _shown_labels(problems)
        slots = max(1, slots or len(problems))
        ax.set_xticks(positions)
        width_in = ax.figure.get_figwidth() * 0.75 / slots
        crowded = _longest_line_in(shown) > width_in
        # turned labels sit width_in * sin(angle) apart across their lines: 30 degrees while their lines fit there
        lines = max((p.count("\n") + 1 for p in shown), default=1)
        angle = 0 if not crowded else 30 if width_in * 0.5 >= lines * LABEL_LINE_IN else 90
        ax.set_xticklabels(shown, rotation=angle, ha="right" if angle == 30 else "center", fontsize=8,
                           rotation_mode="anchor" if angle == 30 else "default")
        ax.set_xlim(-0.6, slots - 0.4)
        ax.set_xlabel(GROUPED_AXIS_LABEL if grouped else "problem M×N×K (by size; a category each, not a size axis)")
    else:
        ax.set_yticks(positions)
        ax.set_yticklabels(problems, fontsize=8)


def wrap_layout(problems: int, bars: int) -> tuple[int, float]:
    """(problems per row, figure width in inches) for `problems` groups of `bars` bars: one row while the groups
    fit in WIDTH_MAX_IN at SLOT_IN a bar, else as few rows as fit, the problems shared evenly among them."""
    group_in = bars * SLOT_IN / GROUP_FILL
    fit = max(1, int(WIDTH_MAX_IN * AXES_SHARE // group_in))
    rows = math.ceil(problems / fit)
    per_row = math.ceil(problems / rows)
    return per_row, min(WIDTH_MAX_IN, max(7.5, per_row * group_in / AXES_SHARE + 1.0))


def problem_rows(problems: list[str], bars: int, one_row: tuple[float, float] | None = None):
    """(figure, [(axes, its problems)], problems per row) for grouped bars, a group of `bars` a problem, laid
    out by wrap_layout: one axes per row, stacked. one_row: the figure's size (inches) when a single row holds
    every problem (a plot that predates wrapping keeps its own); else wrap_layout's width, ROW_IN for one row,
    and for several ROW_AXES_IN of axes a row with room for the tick labels between them.
    Draw each row, then name its problems with problem_row_axes."""
    per_row, width_in = wrap_layout(len(problems), bars)
    chunks = [problems[i:i + per_row] for i in range(0, len(problems), per_row)]
    if len(chunks) == 1:
        fig = Figure(figsize=one_row or (width_in, ROW_IN + 0.6))
        return fig, [(fig.subplots(1, 1), chunks[0])], per_row
    # Between two rows go the upper row's tick labels, turned upright when crowded (problem_axis): the gap is
    # sized for them in inches, or the row below would be drawn over their first characters.
    label_in = _longest_line_in(_shown_labels(problems)[0])
    gap_in, top_in, bottom_in = label_in + 0.35, 0.6, label_in + 0.55
    height = len(chunks) * (ROW_AXES_IN + gap_in) - gap_in + top_in + bottom_in
    fig = Figure(figsize=(width_in, height))
    axes = fig.subplots(len(chunks), 1, squeeze=False)[:, 0]
    fig.subplots_adjust(top=1 - top_in / height, bottom=bottom_in / height, hspace=gap_in / ROW_AXES_IN)
    return fig, list(zip(axes, chunks)), per_row


def problem_row_axes(rows: list, per_row: int) -> None:
    """The problem axis of each row of problem_rows, on one scale of per_row slots (a short last row is not
    stretched); the axis title only under the last row."""
    for ax, chunk in rows:
        problem_axis(ax, chunk, slots=per_row)
        if ax is not rows[-1][0]:
            ax.set_xlabel("")


def size_axis(rows: pd.DataFrame) -> tuple[pd.Series, str] | None:
    """A true size axis when the problems are one family of shapes: the edge when every problem is square,
    the one dimension that varies when the others are fixed; None otherwise (the problems are then
    categories). Grouped problems are categories: two routings of one token count share M, N and K."""
    if "grouped" in rows and rows["grouped"].map(lambda g: isinstance(g, dict) and bool(g)).any():
        return None
    m, n, k = rows["m"], rows["n"], rows["k"]
    if len(rows) and (m == n).all() and (n == k).all():
        return m.astype(float), "problem size M = N = K"
    varying = [d for d in ("m", "n", "k") if rows[d].nunique() > 1]
    if len(varying) == 1:
        d = varying[0]
        fixed = ", ".join(f"{o.upper()}={int(rows[o].iloc[0])}" for o in ("m", "n", "k") if o != d)
        return rows[d].astype(float), f"{d.upper()} ({fixed})"
    return None


class TickLabels(Formatter):
    """Tick labels as '%g'. `big`: 3 significant digits from 1e6 up. `leading`: only values whose leading
    digit is one of these (2x and 5x minor ticks), the others unlabelled. A class, not a FuncFormatter of a
    lambda, so that a figure pickles and can be saved in another process (rendering.py)."""

    def __init__(self, big: bool = False, leading: tuple[int, ...] | None = None):
        self.big, self.leading = big, leading

    def __call__(self, x, pos=None) -> str:
        if self.leading is not None and (x <= 0 or round(x / 10 ** math.floor(math.log10(x))) not in self.leading):
            return ""
        return f"{x:.3g}" if self.big and x >= 1e6 else f"{x:g}"


def pow2_axis(ax, values, axis: str = "x", length_in: float | None = None) -> None:
    """A log-2 axis with a tick at each value, thinned so that no two labels touch (`length_in`: the axis'
    length in inches, default: the figure's width or height times 0.7)."""
    vals = sorted(set(float(v) for v in values if v and v > 0))
    getattr(ax, f"set_{axis}scale")("log", base=2)
    target = getattr(ax, f"{axis}axis")
    target.set_minor_formatter(NullFormatter())
    fmt = TickLabels(big=True)
    if length_in is None:
        length_in = 0.7 * (ax.figure.get_figwidth() if axis == "x" else ax.figure.get_figheight())
    getattr(ax, f"set_{axis}ticks")(spaced_ticks(vals, length_in, max(len(fmt(v)) for v in vals) if vals else 1))
    target.set_major_formatter(fmt)
    if len(vals) == 1:
        getattr(ax, f"set_{axis}lim")(vals[0] / 2, vals[0] * 2)


def spaced_ticks(values: list[float], length_in: float, label_chars: int) -> list[float]:
    """Values kept for ticks on a log axis `length_in` inches long: each at least one label's width (plus a
    gap) past the last kept, so labels of close values (251 and 256) do not overprint; the largest value
    always gets its tick."""
    vals = sorted(set(values))
    if len(vals) <= 1:
        return vals
    per_in = math.log(vals[-1] / vals[0]) * 1.1 / max(length_in, 0.5)  # log units per inch (margins: 1.1)
    gap = (0.075 * label_chars + 0.12) * per_in
    kept = [vals[0]]
    for v in vals[1:]:
        if math.log(v / kept[-1]) >= gap:
            kept.append(v)
    if kept[-1] != vals[-1]:
        if len(kept) > 1 and math.log(vals[-1] / kept[-2]) >= gap:
            kept[-1] = vals[-1]
        elif len(kept) == 1:
            kept.append(vals[-1]) if math.log(vals[-1] / kept[0]) >= gap else None
    return kept


def problems_by_size(rows: pd.DataFrame) -> list[str]:
    return sorted_problems(rows["problem"])


def panel_axes(axes, problems: list):
    """(axis, problem) for each problem in a grid of panels; the grid's left-over axes are hidden."""
    for idx, ax in enumerate(axes.flat):
        if idx >= len(problems):
            ax.set_visible(False)
            continue
        yield idx, ax, problems[idx]


def errorbar(ax, x, y, ci, style, label=None, capsize=2.5):
    """A point (or a line through points) with asymmetric error bars where a CI is known."""
    y = np.asarray(y, dtype=float)
    lo = np.array([c[0] if c else v for c, v in zip(ci, y)])
    hi = np.array([c[1] if c else v for c, v in zip(ci, y)])
    err = np.vstack([np.maximum(y - lo, 0), np.maximum(hi - y, 0)])
    return ax.errorbar(x, y, yerr=err, label=label, capsize=capsize, elinewidth=1, **style)


def zoom_to_data(ax, values: np.ndarray) -> None:
    """The axis fitted to the data (not from 0): a change of a few percent must be visible."""
    vals = values[np.isfinite(values)]
    if not len(vals):
        return
    lo, hi = float(vals.min()), float(vals.max())
    pad = max((hi - lo) * 0.12, abs(hi) * 0.02, 1e-9)
    ax.set_ylim(lo - pad, hi + pad)
