"""The git side of `gemmcompare bisect`: the repository that holds a spec, commits named by the user, the
commits between them, and the one scratch worktree each commit is checked out into.

Nothing here changes the user's working tree, index or branch: every checkout happens in a worktree of
its own (`git worktree add --detach`) in the temporary folder, removed when the bisect ends, Ctrl-C
included. Its path is the same for every commit and every bisect of one repository, so a kernel source
that did not change is a build-cache hit (the cache key holds the spec's folder); a lock keeps two
bisects of one repository apart.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

GIT_TIMEOUT_S = 120


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:10]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    except FileNotFoundError:
        raise InputError("git is not installed (bisect checks commits out with it)") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"git {' '.join(args)} did not answer within {GIT_TIMEOUT_S} s in {cwd}") from None
    if check and proc.returncode != 0:
        raise InputError(f"git {' '.join(args)} failed in {cwd}: {(proc.stderr or proc.stdout).strip()[:300]}")
    return proc


def repository_of(spec: Path) -> tuple[Path, Path]:
    """(the repository's top folder, the spec's path inside it) for a spec path in the user's checkout."""
    spec = Path(spec).absolute()
    folder = spec.parent
    if not folder.is_dir():
        raise InputError(f"{spec}: the folder {folder} does not exist")
    proc = git(folder, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise InputError(f"{spec} is not inside a git repository: bisect checks out the commits of the repository "
                         f"that holds the spec and its kernels")
    root = Path(proc.stdout.strip()).resolve()
    try:
        inside = spec.resolve().relative_to(root)
    except ValueError:
        raise InputError(f"{spec} is not inside the repository {root}") from None
    return root, inside


def resolve(root: Path, rev: str, what: str) -> Commit:
    """The commit a revision names (a hash, a branch, a tag, HEAD~3), with its subject."""
    proc = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise InputError(f"{what} {rev!r} is not a commit of {root}")
    sha = proc.stdout.strip()
    return Commit(sha, git(root, "log", "-1", "--format=%s", sha).stdout.strip())


def between(root: Path, good: Commit, bad: Commit) -> tuple[list[Commit], str]:
    """The commits after `good` up to `bad` (bad last), oldest first, and a note ('' when none is needed).

    The first-parent line from bad back to good when good is on it (a merge is one step, as
    `git bisect --first-parent`); otherwise every commit on the ancestry path in topological order."""
    if good.sha == bad.sha:
        raise InputError(f"the good and the bad commit are the same commit ({good.short}): nothing to bisect")
    if git(root, "merge-base", "--is-ancestor", good.sha, bad.sha, check=False).returncode != 0:
        raise InputError(f"good commit {good.short} is not an ancestor of bad commit {bad.short}: "
                         f"bisect looks for the change between an older good commit and a newer bad one")
    line = _log(root, "--first-parent", f"{good.sha}..{bad.sha}")
    oldest_parent = git(root, "rev-parse", f"{line[0].sha}^1", check=False).stdout.strip() if line else ""
    if line and oldest_parent == good.sha:
        return line, ""
    path = _log(root, "--ancestry-path", "--topo-order", f"{good.sha}..{bad.sha}")
    return path, (f"good commit {good.short} is not on the first-parent line of {bad.short}: the {len(path)} "
                  f"commits between are tried in topological order, which names the first bad commit exactly only "
                  f"where the history between is a line")


def _log(root: Path, *args: str) -> list[Commit]:
    out = git(root, "log", "--reverse", "--format=%H%x00%s", *args).stdout
    return [Commit(*line.split("\x00", 1)) for line in out.splitlines() if line]


def exists_at(root: Path, commit: Commit, path: Path) -> bool:
    return git(root, "cat-file", "-e", f"{commit.sha}:{path.as_posix()}", check=False).returncode == 0


class ScratchTree:
    """One detached worktree of `root`, checked out at one commit after another; removed on exit.

        with ScratchTree(root) as tree:
            tree.checkout(commit)   # tree.path now holds exactly that commit's files
    """

    def __init__(self, root: Path, where: Path | None = None):
        self.root = Path(root)
        key = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        self.path = Path(where) if where else Path(tempfile.gettempdir()) / f"gemmcompare-bisect-{key}"
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._lock = None
        self._added = False

    def __enter__(self) -> "ScratchTree":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self._lock_path, "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            self._lock = None
            raise InputError(f"another gemmcompare bisect of {self.root} is running (it holds {self._lock_path}); "
                             f"wait for it, or stop it") from None
        self._remove()  # what a killed bisect left behind
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._remove()
        finally:
            if self._lock is not None:
                self._lock.close()
                self._lock = None
                self._lock_path.unlink(missing_ok=True)

    def checkout(self, commit: Commit) -> Path:
        """tree.path at `commit`, with nothing else in it (untracked and ignored files are cleaned away)."""
        if not self._added:
            git(self.root, "worktree", "add", "--detach", "--force", "--quiet", str(self.path), commit.sha)
            self._added = True
        else:
            git(self.path, "checkout", "--detach", "--force", "--quiet", commit.sha)
            git(self.path, "clean", "-ffdxq")
        return self.path

    def _remove(self) -> None:
        if self.path.exists():
            git(self.root, "worktree", "remove", "--force", "--force", str(self.path), check=False)
            shutil.rmtree(self.path, ignore_errors=True)
        git(self.root, "worktree", "prune", check=False)
        self._added = False
