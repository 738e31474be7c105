"""The self-contained HTML page of a report (plots embedded as base64 PNG) and the receipt rendering shared with
the Markdown report: device, software, contracts, timing method, tolerance formula."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any, Iterable

from .data import fmt_bytes
from . import rendering

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 1400px;
       padding: 0 1em; color: #1b1b1b; line-height: 1.4; box-sizing: border-box; }
h1 { font-size: 1.45em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .5em 0 1.2em; font-size: .78em; max-width: 100%; }
th, td { border: 1px solid #ddd; padding: .2em .4em; vertical-align: top; }
th { background: #f4f4f4; white-space: normal; text-align: center; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.text { text-align: left; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 9em; max-width: 30em; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #e8eef7; }
table.sortable th.sorted-asc::after { content: " \\25B2"; font-size: .7em; }
table.sortable th.sorted-desc::after { content: " \\25BC"; font-size: .7em; }
table.kv td { text-align: left; white-space: normal; overflow-wrap: anywhere; }
table.kv td:first-child { font-weight: 600; width: 14em; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
.note { color: #7a5a00; } pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: .8em;
                               white-space: pre-wrap; overflow-wrap: anywhere; }
.impl { display: block; font-size: .85em; color: #555; }
.status-FAIL, .status-CRASH, .status-TIMEOUT, .status-BUILD_ERROR { background: #fde2e1; }
.verdict-SLOWER, .verdict-REGRESSION { background: #fde2e1; } .verdict-FASTER, .verdict-FIXED { background: #e3f6e3; }
.verdict-UNKNOWN { background: #fff6d6; }
"""

# Click a header of a table.sortable to sort its rows by that column (numbers by value, the rest as text);
# a second click reverses. Inline, no external script, so the page stays one self-contained file.
SORT_SCRIPT = """
(function () {
  function key(cell) {
    var t = (cell.getAttribute('data-sort') || cell.textContent).trim();
    var m = t.replace(/[,%]/g, '').match(/^[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?/i);
    return m ? {n: parseFloat(m[0]), t: t} : {n: null, t: t.toLowerCase()};
  }
  function sortBy(table, th, index) {
    var body = table.tBodies[0];
    var desc = th.classList.contains('sorted-asc');
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
    th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[index]), y = key(b.cells[index]);
      var r;
      if (x.n !== null && y.n !== null) { r = x.n - y.n; }
      else if (x.n !== null) { r = -1; } else if (y.n !== null) { r = 1; }  /* empty cells last */
      else { r = x.t < y.t ? -1 : x.t > y.t ? 1 : 0; }
      return desc ? -r : r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.title = 'sort by this column';
      th.addEventListener('click', function () { sortBy(table, th, index); });
    });
  });
})();
"""

DEVICE_KEYS = ("gpu", "gpu_name", "device", "device_name", "name", "cc", "compute_capability", "sm_count", "l2_bytes",
               "memory_bytes", "total_memory_bytes", "driver", "clocks", "hostname", "host")
SOFTWARE_KEYS = ("cuda", "cuda_runtime", "nvcc", "torch", "cutlass", "python", "gemmcompare", "gemmcompare_version",
                 "git_commit", "git_dirty", "git_root", "commit", "dirty", "spec", "spec_name", "spec_hash",
                 "spec_path",
                 "os", "platform", "cublas")
# receipt keys that open a section of their own (a dict's items become its rows)
SECTION_KEYS = {"contracts": "Contracts", "timing": "Timing", "timing_settings": "Timing", "tolerance": "Tolerance",
                "tolerance_rule": "Tolerance", "tolerances": "Tolerance", "correctness": "Correctness"}


def _text(value: Any, key: str = "") -> str:
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        return ", ".join(f"{k}={v}" for k, v in value.items())  # e.g. a dtype's atol and rtol on one line
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=1, default=str)
    if "bytes" in key and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value} ({fmt_bytes(value)})"
    return str(value)


def receipt_sections(receipt: dict | None) -> list[tuple[str, list[tuple[str, Any]]]]:
    """The receipt grouped for reading: Device, Software, Contracts, Timing, Tolerance, Other."""
    receipt = dict(receipt or {})
    groups: dict[str, list[tuple[str, Any]]] = {"Device": [], "Software": []}
    for key, value in receipt.items():
        if key in ("gpu", "device") and isinstance(value, dict):
            groups["Device"].extend(value.items())
        elif key in ("software", "versions") and isinstance(value, dict):
            groups["Software"].extend(value.items())
        elif key in SECTION_KEYS:
            title = SECTION_KEYS[key]
            items = list(value.items()) if isinstance(value, dict) else [("rule" if key == "tolerance_rule" else key,
                                                                           value)]
            groups.setdefault(title, []).extend(items)
        elif key in DEVICE_KEYS:
            groups["Device"].append((key, value))
        elif key in SOFTWARE_KEYS:
            groups["Software"].append((key, value))
        else:
            groups.setdefault("Other", []).append((key, value))
    order = ["Device", "Software", "Contracts", "Timing", "Tolerance", "Correctness", "Other"]
    return [(t, groups[t]) for t in order if groups.get(t)]


def _receipt_items(receipt: dict | None):
    """(section title, [(key, text, is_block)]) for each section of the receipt, values as display text."""
    for title, items in receipt_sections(receipt):
        yield title, [(str(key), text, "\n" in text) for key, value in items for text in [_text(value, key)]]


def receipt_markdown(receipt: dict | None) -> str:
    out = []
    for title, items in _receipt_items(receipt):
        out.append(f"**{title}**\n")
        out += [f"- {key}:\n\n```\n{text}\n```" if block else f"- {key}: {text}" for key, text, block in items]
        out.append("")
    return "\n".join(out) if out else "_no receipt recorded_\n"


def receipt_html(receipt: dict | None) -> str:
    out = []
    for title, items in _receipt_items(receipt):
        rows = "".join(f"<tr><td>{html.escape(key)}</td><td>"
                       f"{f'<pre>{html.escape(text)}</pre>' if block else html.escape(text)}</td></tr>"
                       for key, text, block in items)
        out.append(f"<h3>{html.escape(title)}</h3><table class='kv'>{rows}</table>")
    return "\n".join(out) if out else "<p><em>no receipt recorded</em></p>"


def embed_png(path: Path) -> str:
    data = base64.b64encode(rendering.wait_for(path).read_bytes()).decode("ascii")
    return f"<img alt='{html.escape(Path(path).stem)}' src='data:image/png;base64,{data}'>"


def figures_html(plots: Iterable) -> str:
    """<figure>s for drawn plots (embedded PNG) and a list of the plots skipped with their reasons."""
    drawn, skipped = [], []
    for p in plots:
        if p.skipped:
            skipped.append(f"<li>{html.escape(p.title)}: {html.escape(p.skipped)}</li>")
        elif p.png is not None:
            cap = html.escape(p.caption)
            drawn.append(f"<figure>{embed_png(p.png)}<figcaption>{html.escape(p.title)}"
                         f"{'. ' + cap if cap else ''}</figcaption></figure>")
    out = "\n".join(drawn)
    if skipped:
        out += "<p class='note'>Not drawn:</p><ul class='note'>" + "\n".join(skipped) + "</ul>"
    return out


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head>\n<body>\n<h1>{html.escape(title)}</h1>\n{body}\n"
            f"<script>{SORT_SCRIPT}</script>\n</body></html>\n")
