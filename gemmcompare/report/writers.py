"""The one way tables leave gemmcompare: Markdown, HTML and full-precision CSV, and the page that
`compare` and `history` write (a table with a plot, as .csv, .md and .html side by side)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Callable

import pandas as pd

from ..files import write_csv
from .html import embed_png, page

TEXT_COLUMNS = ("GPU", "implementation", "status", "remark", "spills st/ld", "contract", "problem", "reason", "baseline",
                "library", "CUTLASS", "hand-written", "custom", "kind", "row", "best library",
                "reasons")  # left-aligned in Markdown


def markdown_table(display: pd.DataFrame) -> str:
    """A GitHub Markdown table (no dependency on tabulate); text columns left, numbers right aligned."""
    headers = list(display.columns)
    rows = [[str(v).replace("|", "\\|").replace("\n", " ") for v in r] for r in display.itertuples(index=False)]
    numeric = [h not in TEXT_COLUMNS for h in headers]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if num else c.ljust(w)
                                 for c, w, num in zip(cells, widths, numeric)) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if num else ("-" * (w + 2)) for w, num in zip(widths, numeric)) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


_NUMBER = re.compile(r"^[-+±]?(\d[\d,]*\.?\d*|\.\d+)(e[-+]?\d+)?\s*%?$", re.I)  # right-aligned, sorted as numbers
WRAP_COLUMNS = ("implementation", "remark", "detail", "reason", "source", "best", "library", "CUTLASS", "hand-written",
                "custom", "faster", "less energy", "row", "reasons")  # long text: cells wrap to fit the page


def cells_table(headers: list[str], rows: list[list[str]], *, numeric: list[bool] | None = None,
                css: list[list[str | None]] | None = None) -> str:
    """A sortable HTML table (click a header; the page's inline script sorts) of cells that are already HTML.
    Numeric columns are right-aligned; columns named in WRAP_COLUMNS wrap."""
    numeric = numeric or [False] * len(headers)
    # a header may break after an underscore (pct_of_<wbr>baseline), so that headers do not set the table's width
    head = "".join(f"<th class='{'num' if num else 'text'}{' wrap' if h in WRAP_COLUMNS else ''}'>"
                   f"{html.escape(h).replace('_', '_<wbr>')}</th>" for h, num in zip(headers, numeric))
    body = []
    for i, row in enumerate(rows):
        tds = []
        for j, cell in enumerate(row):
            classes = ["num" if numeric[j] else "text"] + (["wrap"] if headers[j] in WRAP_COLUMNS else [])
            extra = css[i][j] if css else None
            if extra:
                classes.append(extra)
            tds.append(f"<td class='{' '.join(classes)}'>{cell}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<table class='results sortable'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def html_table(display: pd.DataFrame, cell_class: Callable[[str], str | None] | None = None) -> str:
    """An HTML table of display strings (sortable, long text wrapping); `cell_class(text)` may name a CSS class
    for a cell."""
    headers = [str(c) for c in display.columns]
    text = [[str(v) for v in row] for row in display.itertuples(index=False)]
    numeric = [bool(col) and all(_NUMBER.match(v) for v in col if v) and any(col)
               for col in ([row[j] for row in text] for j in range(len(headers)))]
    css = [[cell_class(v) if cell_class else None for v in row] for row in text]
    return cells_table(headers, [[html.escape(v) for v in row] for row in text], numeric=numeric, css=css)


def write_table_page(out_dir: str | Path, stem: str, title: str, table: pd.DataFrame, display: pd.DataFrame, *,
                     plot_files: list[Path] = (), caption: str = "", preamble: str = "", notes: list[str] = (),
                     rule: str = "", cell_class: Callable[[str], str | None] | None = None) -> list[Path]:
    """<stem>.csv (full precision), <stem>.md and <stem>.html (plot embedded), returned with the plot's files.
    `preamble` is shown as preformatted text above the plot; `rule` below the table, under its own heading."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = write_csv(table, out / f"{stem}.csv")
    md = [f"# {title}\n"]
    body = []
    if preamble:
        md.append(f"```\n{preamble}\n```\n")
        body.append(f"<pre>{html.escape(preamble)}</pre>")
    if plot_files:
        md.append(f"![{stem}]({plot_files[0].name})\n" + (f"\n_{caption}_\n" if caption else ""))
        body.append(f"<figure>{embed_png(plot_files[0])}<figcaption>{html.escape(caption)}</figcaption></figure>")
    md.append(markdown_table(display) + "\n")
    body.append(html_table(display, cell_class))
    if notes:
        md.append("\n".join(f"- {n}" for n in notes) + "\n")
        body.append("".join(f"<p class='note'>{html.escape(n)}</p>" for n in notes))
    if rule:
        md.append(f"## The rule\n\n```\n{rule}```\n")
        body.append(f"<h2>The rule</h2><pre>{html.escape(rule)}</pre>")
    (out / f"{stem}.md").write_text("\n".join(md) + "\n")
    (out / f"{stem}.html").write_text(page(title, "\n".join(body)))
    return [csv, out / f"{stem}.md", out / f"{stem}.html", *plot_files]
