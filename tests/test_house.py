"""The repository's house rules (issue 39), checked on every commit: modules of one concern, a front room of
specs, receipts that hold data, links that resolve and a tree that every clone can afford."""

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
# a repository path cited in prose; `rev:path` (a file in git history) and `{a,b}` alternatives are read as such
PATH = re.compile(r"(?<![\w/.:-])((?:experiments|docs|extensions|cutlass_configs|tests)/[\w./,{}-]*[\w/}])")


def expand(cited: str) -> list[str]:
    """`a/{b,c}.md` -> [a/b.md, a/c.md]"""
    m = re.search(r"\{([^{}]*)\}", cited)
    if not m:
        return [cited]
    return [x for alt in m.group(1).split(",") for x in expand(cited[:m.start()] + alt + cited[m.end():])]


def test_every_link_and_cited_path_in_a_committed_page_exists():
    """Markdown links in every committed page resolve, and every repository path the README, docs/ and the
    experiments' indexes cite exists (a receipt they cite must not have been removed)."""
    missing = []
    for page in tracked_files():
        if page.suffix != ".md":
            continue
        text = page.read_text()
        for target in LINK.findall(text):
            target = target.split("#")[0]
            if target and not re.match(r"^[a-z]+:", target) and not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)}: link {target}")
        if page.parent in (ROOT, ROOT / "docs") or page in (EXPERIMENTS / "README.md",
                                                            EXPERIMENTS / "studies" / "README.md"):
            for cited in (c for found in PATH.findall(text) for c in expand(found.rstrip(","))):
                if not (ROOT / cited).exists() and not (page.parent / cited).exists():
                    missing.append(f"{page.relative_to(ROOT)}: path {cited}")
    assert not missing, "\n".join(missing)
