"""Load an HTML page in real headless Chromium and report what a reader would hit: script errors, console
errors, tables wider than the window, and whether clicking a header sorts its table.

    result = check_page(Path("report.html"), width=1400)   # dict, see PROBE below; None without Chromium

How: the page is copied with two small scripts added (one first in <head> that records errors and
console.error calls, one last in <body> that measures and clicks), loaded with `chromium --headless
--dump-dom`, and the probe's JSON read back from the dumped DOM. Chromium's own console log (stderr with
--enable-logging) is scanned too, for errors the page scripts could not see.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")

RECORDER = """<script>
window.__gcErrors = [];
window.addEventListener('error', function (e) {
  var what = e.message || (e.target && (e.target.src || e.target.href) ? 'failed to load ' + (e.target.src || e.target.href) : e.type);
  window.__gcErrors.push('error: ' + what); }, true);
window.addEventListener('unhandledrejection', function (e) { window.__gcErrors.push('rejection: ' + e.reason); });
(function () { var orig = console.error;
  console.error = function () { window.__gcErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
                                return orig.apply(console, arguments); }; })();
</script>"""

# Runs at the window's load event (which --dump-dom waits for), so every image has loaded or failed by then.
# Measures every table against the window, then sorts the first sortable table with two or more rows by
# each of its columns in turn (clicking the header) and checks the order of the keys the page sorts by.
PROBE = """<script>
window.addEventListener('load', function () {
  var out = {viewport: window.innerWidth, page_width: document.documentElement.scrollWidth, tables: [],
             sort_checked: 0, sort_failures: [], broken_images: []};
  document.querySelectorAll('table').forEach(function (t, i) {
    var r = t.getBoundingClientRect();
    out.tables.push({index: i, right: Math.ceil(r.right), width: Math.ceil(r.width), scroll_width: t.scrollWidth,
                     heading: (t.previousElementSibling || {}).textContent || ''});
  });
  function num(cell) {
    var t = cell.textContent.trim().replace(/[,%]/g, '');
    var m = t.match(/^[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?/i);
    return m ? parseFloat(m[0]) : null;
  }
  var tables = Array.prototype.filter.call(document.querySelectorAll('table.sortable'),
                                           function (t) { return t.tBodies[0].rows.length > 1; });
  if (tables.length) {
    var t = tables[0];
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, c) {
      th.click();
      var vals = Array.prototype.map.call(t.tBodies[0].rows, function (row) { return num(row.cells[c]); })
                      .filter(function (v) { return v !== null; });
      for (var k = 1; k < vals.length; k++) {
        if (vals[k] < vals[k - 1]) { out.sort_failures.push(th.textContent + ': ' + vals.join(',')); break; }
      }
      out.sort_checked += 1;
    });
  }
  Array.prototype.forEach.call(document.images, function (img) {
    if (img.complete && img.naturalWidth === 0) { out.broken_images.push(img.src); }
  });
  out.errors = window.__gcErrors;
  var pre = document.createElement('pre');
  pre.id = 'gc-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def find_browser() -> str | None:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def check_page(page: Path, width: int = 1400, height: int = 1000, timeout: float = 120) -> dict | None:
    """The probe's findings for `page` in a window `width` pixels wide, plus `console` (error lines from
    Chromium's log); None when no Chromium is installed. Raises RuntimeError when Chromium fails."""
    browser = find_browser()
    if browser is None:
        return None
    page = Path(page).resolve()
    text = page.read_text()
    # The copy lives in a temporary folder; <base> makes the page's relative links and images resolve
    # where the original is, as they do for a reader (else every <img> is a load error, reported or
    # not depending on whether it fails before the probe runs).
    base = f'<base href="{page.parent.as_uri()}/">'
    text = text.replace("<head>", "<head>" + base + RECORDER, 1)
    text = text.replace("</body>", PROBE + "</body>", 1) if "</body>" in text else text + PROBE
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "page.html"
        copy.write_text(text)
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
               f"--user-data-dir={tmp}/profile", f"--window-size={width},{height}", "--hide-scrollbars",
               "--enable-logging=stderr", "--v=0", "--dump-dom", copy.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    match = re.search(r'<pre id="gc-probe">(.*?)</pre>', proc.stdout, re.S)
    if match is None:
        raise RuntimeError(f"{browser} gave no probe result (exit {proc.returncode}): {proc.stderr[-2000:]}")
    result = json.loads(match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                        .replace("&amp;", "&"))
    # Chromium logs page console messages as 'INFO:CONSOLE(line)] "message", source: ...'; errors thrown
    # by scripts read 'Uncaught ...'.
    result["console"] = [line for line in proc.stderr.splitlines()
                         if "CONSOLE" in line and ("Uncaught" in line or "rror" in line)]
    return result
