"""The report's tables and figures for a notebook: `gemmcompare.table(df)` and `gemmcompare.plot(df, kind)`.

Both take the frames `gemmcompare.load` and `gemmcompare.run` return and draw exactly what `gemmcompare report`
draws (the same summary, rounding and plot functions), so a notebook and a report never disagree. The frames'
`problem` column is an ordered categorical (by m, then n, k and batch, as numbers): a pivot or a sort puts
257x263x251 before 1024x1024x1024 before 4096x4096x4096, where strings would put 1024... first.
"""

from __future__ import annotations

import base64
import difflib
import html
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .errors import InputError
from .report.kinds import PLOT_NAMES

if TYPE_CHECKING:
    import pandas as pd

    from .report.plots import Plot

NEEDED = ("problem", "contract", "implementation", "status")  # without these no table or plot can be made


def sortable_problems(df: pd.DataFrame) -> pd.DataFrame:
    """df with `problem` as a categorical ordered by (m, n, k, batch) as numbers; m, n, k stay integer columns."""
    import pandas as pd

    if "problem" not in df or df.empty:
        return df
    labels = [str(p) for p in df["problem"]]
    order = sorted(set(labels), key=_size_key)
    df["problem"] = pd.Categorical(labels, categories=order, ordered=True)
    return df


def plain_problems(x):
    """A frame of load()'s with `problem` back to the plain labels the report and the verdicts' rule join on
    (anything else as it is)."""
    import pandas as pd

    if isinstance(x, pd.DataFrame) and "problem" in x and isinstance(x["problem"].dtype, pd.CategoricalDtype):
        return x.assign(problem=x["problem"].astype(str))
    return x


def _size_key(label: str) -> tuple:
    """'MxNxK' or 'MxNxKxB' as (m, n, k, batch, label); a grouped problem's label after them, by its size (sum of
    the group Ms x N x K); a label of another form after those, by text."""
    from .grouped import label_volume

    parts = label.split("x")
    if 3 <= len(parts) <= 4 and all(p.isdigit() for p in parts):
        m, n, k, *batch = (int(p) for p in parts)
        return (0, m, n, k, batch[0] if batch else 1, label)
    volume = label_volume(label)
    if volume is not None:
        return (1, volume, 0, 0, 0, label)
    return (2, 0, 0, 0, 0, label)


def _rows(df, what: str) -> pd.DataFrame:
    """The rows as the report modules take them: a DataFrame from load()/run() (or load()'s (rows, receipt)
    pair), `problem` back to plain labels."""
    import pandas as pd

    if isinstance(df, tuple) and len(df) == 2 and isinstance(df[0], pd.DataFrame):
        df = df[0]
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{what}: expected the DataFrame gemmcompare.load() or gemmcompare.run() returns, "
                         f"got {type(df).__name__}")
    missing = [c for c in NEEDED if c not in df]
    if missing:
        raise InputError(f"{what}: the frame has no {', '.join(missing)} column(s): pass the rows that "
                         "gemmcompare.load() or gemmcompare.run() return (a filter of them is fine)")
    if df.empty:
        raise InputError(f"{what}: the frame has no rows")
    from .report.data import normalise_rows

    rows = normalise_rows(plain_problems(df))
    if "gpu" not in rows:
        rows["gpu"] = "unknown GPU"
    return rows


def table(df, *, rounded: bool = True) -> pd.DataFrame:
    """The report's table of these rows: by contract, problem size, baseline first, then passing rows fastest
    first. rounded=True: the report's strings for people (numbers rounded, the baseline and tuned picks marked,
    empty columns left out); rounded=False: the same rows and order at full precision, every column."""
    from .report.tables import display_table, summary_table

    summary = summary_table(_rows(df, "table"))
    shown = display_table(summary) if rounded else summary
    return shown.reset_index(drop=True)


class Plots(list):
    """The figures of one plot kind (a list of report.plots.Plot: title, files, or why it was skipped). A
    notebook shows each PNG with its title and caption; a skipped figure shows why."""

    def _repr_html_(self) -> str:
        parts = []
        for p in self:
            title = f"<p><b>{html.escape(p.title)}</b></p>"
            if p.skipped or p.png is None:
                parts.append(f"{title}<p><i>not drawn: {html.escape(p.skipped or 'no image')}</i></p>")
                continue
            data = base64.b64encode(Path(p.png).read_bytes()).decode()
            caption = f"<p><small>{html.escape(p.caption)}</small></p>" if p.caption else ""
            parts.append(f'{title}<img src="data:image/png;base64,{data}" style="max-width:100%">{caption}')
        return "\n".join(parts) or "<p><i>no figure</i></p>"

    def __repr__(self) -> str:
        return "\n".join(f"{p.kind}: {p.title}: " + (f"not drawn ({p.skipped})" if p.skipped else
                                                      ", ".join(str(f) for f in p.files)) for p in self)


def plot(df, kind: str = "throughput_vs_size", *, out_dir: str | Path | None = None) -> Plots:
    """The report's figures of one kind for these rows (PNG and SVG files, as `gemmcompare report` draws them),
    written to out_dir (default: a new temporary folder). kind: one of PLOT_NAMES. A figure the rows cannot
    support is returned with the reason it was skipped, never drawn empty."""
    rows = _rows(df, "plot")
    _check_kind(kind)
    from .report.plots import make_plots
    from .report.rendering import wait_for

    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix=f"gemmcompare-{kind}-"))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"plot: cannot write to out_dir {out} ({exc.strerror or exc})") from None
    figures = Plots(make_plots(rows, out, [kind]))
    _wait(figures, wait_for)
    return figures


def _check_kind(kind) -> None:
    if kind in PLOT_NAMES:
        return
    close = difflib.get_close_matches(str(kind), PLOT_NAMES, n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise InputError(f"plot: {str(kind)[:60]!r} is not a plot kind{hint}; expected one of {', '.join(PLOT_NAMES)}")


def _wait(figures: Iterable[Plot], wait_for) -> None:
    """A figure saved on the rendering pool is read only once it is written."""
    for p in figures:
        for f in p.files:
            wait_for(f)
