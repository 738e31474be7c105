"""The repository's house rules (issue 39), checked on every commit: modules of one concern, a front room of
specs, receipts that hold data, links that resolve and a tree that every clone can afford."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
MAX_MODULE_LINES = 700
MAX_FRONT_ENTRIES = 20
MAX_TREE_BYTES = 10 * 1024 * 1024
# what a receipt may hold: data (rows, receipts, logs, tables, summaries), never pictures, pages or sources
RECEIPT_FORBIDDEN = (".png", ".svg", ".html", ".cu", ".cuh", ".py", ".sh", ".tgz")


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked tree is unknown")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def in_receipt(path: Path) -> bool:
    """Receipts sit in a study's h200/ or h200-*/ folder (one per GPU it was measured on)."""
    return any(part.startswith("h200") for part in path.relative_to(EXPERIMENTS).parts[:-1])


def test_no_module_is_over_700_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "gemmcompare").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them along their concerns): {long}"


def test_the_front_room_holds_the_user_specs_and_a_readme():
    entries = sorted(p.name for p in EXPERIMENTS.iterdir() if not p.name.startswith(".") and p.name != "__pycache__")
    assert "README.md" in entries and "studies" in entries
    assert len(entries) <= MAX_FRONT_ENTRIES, entries
    readme = (EXPERIMENTS / "README.md").read_text()
    for spec in EXPERIMENTS.glob("*.yaml"):  # every spec in front is introduced
        assert spec.name in readme, f"experiments/README.md says nothing of {spec.name}"


def test_receipts_hold_data_only():
    bad = [str(p.relative_to(ROOT)) for p in tracked_files()
           if p.is_relative_to(EXPERIMENTS / "studies") and in_receipt(p) and p.name.endswith(RECEIPT_FORBIDDEN)]
    assert not bad, f"report pages, images or source copies inside receipts (the commit names the sources; " \
                    f"`gemmcompare report` draws the pages): {bad[:10]}"


def test_the_tracked_tree_is_under_10_mb():
    size = sum(p.stat().st_size for p in tracked_files())
    assert size < MAX_TREE_BYTES, f"the tracked tree is {size / 2**20:.1f} MiB"


LINK = re.compile(r"\]\(([^)\s]+)\)")  # a Markdown link's target
HTML_LINK = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)  # an HTML (or Markdown's inline HTML) link
# a repository path cited in prose; `rev:path` (a file in git history) and `{a,b}` alternatives are read as such
PATH = re.compile(r"(?<![\w/.:-])((?:experiments|docs|extensions|cutlass_configs|tests)/[\w./,{}-]*[\w/}])")
PAGES = (".md", ".html", ".htm", ".ipynb")


def expand(cited: str) -> list[str]:
    """`a/{b,c}.md` -> [a/b.md, a/c.md]"""
    m = re.search(r"\{([^{}]*)\}", cited)
    if not m:
        return [cited]
    return [x for alt in m.group(1).split(",") for x in expand(cited[:m.start()] + alt + cited[m.end():])]


def page_text(page: Path) -> str:
    """What a reader follows links from: the page, or a notebook's Markdown cells."""
    if page.suffix == ".ipynb":
        cells = json.loads(page.read_text())["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return page.read_text()


def broken_links(page: Path) -> list[str]:
    """The relative links of a Markdown, HTML or notebook page whose file is not there (web links, anchors and
    inline data are not files)."""
    text = page_text(page)
    targets = HTML_LINK.findall(text) + (LINK.findall(text) if page.suffix in (".md", ".ipynb") else [])
    missing = []
    for target in targets:
        target = target.split("#")[0].split("?")[0]
        if target and not re.match(r"^[a-z]+:", target) and not (page.parent / target).exists():
            missing.append(f"link {target}")
    return missing


def test_every_link_and_cited_path_in_a_committed_page_exists():
    """Links in every committed page (Markdown, HTML, a notebook's text) resolve, and every repository path the
    README, docs/ and the experiments' indexes cite exists (a receipt they cite must not have been removed)."""
    missing = []
    for page in tracked_files():
        if page.suffix not in PAGES:
            continue
        missing += [f"{page.relative_to(ROOT)}: {m}" for m in broken_links(page)]
        if page.suffix == ".md" and (page.parent in (ROOT, ROOT / "docs") or page in (
                EXPERIMENTS / "README.md", EXPERIMENTS / "studies" / "README.md")):
            text = page.read_text()
            for cited in (c for found in PATH.findall(text) for c in expand(found.rstrip(","))):
                if not (ROOT / cited).exists() and not (page.parent / cited).exists():
                    missing.append(f"{page.relative_to(ROOT)}: path {cited}")
    assert not missing, "\n".join(missing)


def test_the_link_check_finds_a_missing_image_in_each_kind_of_page(tmp_path):
    (tmp_path / "here.png").write_bytes(b"png")
    pages = {
        "report.md": "![ok](here.png) ![gone](plots/gone.png) [site](https://example.org) [top](#top)",
        "index.html": '<img src="here.png"><img src=\'gone.svg\'><a href="runs/gone.html#x">x</a><a href="mailto:a@b">m</a>',
        "nb.ipynb": json.dumps({"cells": [{"cell_type": "markdown", "source": ["![f](gone.png)"]},
                                          {"cell_type": "code", "source": ["open('not_a_link.png')"]}]}),
    }
    found = {}
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
        found[name] = broken_links(tmp_path / name)
    assert found == {"report.md": ["link plots/gone.png"], "index.html": ["link gone.svg", "link runs/gone.html"],
                     "nb.ipynb": ["link gone.png"]}
