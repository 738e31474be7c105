"""Point a committed report.html at the PNG files beside it instead of carrying them a second time as base64.

`gemmcompare report` embeds every plot in report.html so that the page is one file to pass around. In the
repository the same PNGs sit beside each page, and the embedded copies were 17 MB of a tree the device tool
carries under 64 MiB. This rewrites each embedded image whose bytes equal a PNG in the page's folder into a
relative link to that file (the page then needs its folder, which the repository keeps together); an image
with no identical file beside it stays embedded. Lossless: the bytes are the file's.
    python3 experiments/link_report_images.py [REPORT_HTML_OR_FOLDER ...]   (default: experiments/results)"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

EMBEDDED = re.compile(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'")


def link_images(page: Path) -> tuple[int, int]:
    """Rewrite `page` in place; (images linked, images left embedded)."""
    by_bytes = {png.read_bytes(): png.name for png in page.parent.glob("*.png")}
    linked = kept = 0

    def replace(match: re.Match) -> str:
        nonlocal linked, kept
        name = by_bytes.get(base64.b64decode(match.group(1)))
        if name is None:
            kept += 1
            return match.group(0)
        linked += 1
        return f"src='{name}'"

    text = page.read_text(encoding="utf-8")
    new = EMBEDDED.sub(replace, text)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return linked, kept


def pages(args: list[str]) -> list[Path]:
    found = []
    for arg in args or ["experiments/results"]:
        path = Path(arg)
        found += [path] if path.is_file() else sorted(path.rglob("report.html"))
    return found


def main(args: list[str]) -> None:
    total_linked = total_kept = 0
    for page in pages(args):
        linked, kept = link_images(page)
        total_linked, total_kept = total_linked + linked, total_kept + kept
        if kept:
            print(f"{page}: {kept} image(s) with no identical PNG beside the page, left embedded")
    print(f"{total_linked} image(s) linked to the PNG beside their page, {total_kept} left embedded")


if __name__ == "__main__":
    main(sys.argv[1:])
