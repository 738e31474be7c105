"""The one way tables leave gemmcompare: Markdown, HTML and full-precision CSV, and the page that
`compare` and `history` write (a table with a plot, as .csv, .md and .html side by side)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Callable

import pandas as pd

from ..files import write_csv
from .html import embed_png, page

TEXT_COLUMNS = ("GPU", "implementation", "status", "remark", "spills st/ld")  # left-aligned in Markdown


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


def html_table(display: pd.DataFrame, cell_class: Callable[[str], str | None] | None = None) -> str:
    """An HTML table of display strings; `cell_class(text)` may name a CSS class for a cell."""
    text = display.to_html(index=False, escape=True, border=0, classes="results")
    if cell_class is not None:
        for value in {str(v) for col in display.columns for v in display[col]}:
            css = cell_class(value)
            if css:
                escaped = html.escape(value)
                text = text.replace(f"<td>{escaped}</td>", f"<td class='{css}'>{escaped}</td>")
    return text


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
