"""`gemmcompare bisect` without a GPU: the search's commit choice and skips, the ends checked, the verdicts
(compare's rule on synthetic runs), a real git repository with a fake measurer (worktrees made and
removed, the user's checkout untouched), bad input, and the demo kernel compiling."""

from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gemmcompare.bisect.driver import FOUND, NONE, RANGE, BisectResult, bisect_repository, search_history
from gemmcompare.bisect.git import Commit, ScratchTree
from gemmcompare.bisect.measure import Measurement, Watch
from gemmcompare.bisect.output import as_json, summary, write
from gemmcompare.bisect.search import BAD, GOOD, SKIP, Search
from gemmcompare.errors import InputError
from gemmcompare.results import Status
from test_report import BASELINE, make_rows, receipt_for

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments" / "studies" / "regressions" / "bisect_demo"))
from make_history import CULPRIT_INDEX, make_history  # noqa: E402

KERNEL = "custom.tiled_gemm"


# -- the search alone -----------------------------------------------------------------------------------------

def drive(n: int, first_bad: int, skipped=()) -> tuple[list[int], object]:
    """Bisect candidates 0..n-1 (n-1 the bad end) whose first bad one is `first_bad`; returns the indices
    measured (in order) and the outcome."""
    search = Search([str(i) for i in range(n)])
    search.record(str(n - 1), BAD)
    measured = []
    while (sha := search.next()) is not None:
        i = int(sha)
        measured.append(i)
        search.record(sha, SKIP if i in skipped else BAD if i >= first_bad else GOOD)
    return measured, search.outcome()


@pytest.mark.parametrize("first_bad", range(7))
def test_eight_commits_take_at_most_three_steps_between_the_ends(first_bad):
    # 8 commits: the good end and 7 candidates after it, the last of them the bad end
    measured, outcome = drive(7, first_bad)
    assert len(measured) <= math.ceil(math.log2(8)) and outcome.first_bad == str(first_bad)
    assert len(set(measured)) == len(measured) and 6 not in measured  # never the bad end again


def test_midpoints():
    search = Search(list("abcdefg"))  # good end before a; g the bad end
    search.record("g", BAD)
    assert search.next() == "c" and search.steps_left() == 3  # 7 possible culprits
    search.record("c", GOOD)
    assert search.next() == "e"
    search.record("e", BAD)
    assert search.next() == "d"
    search.record("d", GOOD)
    assert search.next() is None and search.outcome().first_bad == "e"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 33, 100])
def test_log2_steps_for_any_length(n):
    for first_bad in range(n):
        measured, outcome = drive(n, first_bad)
        assert outcome.first_bad == str(first_bad)
        assert len(measured) <= math.ceil(math.log2(n)) if n > 1 else measured == []


def test_a_skipped_commit_sends_the_search_to_its_neighbour():
    measured, outcome = drive(7, first_bad=4, skipped={2})
    assert measured[:2] == [2, 3]  # the middle did not build: the commit beside it instead
    assert outcome.first_bad == "4"


def test_skips_that_hide_the_culprit_leave_a_range():
    # culprit 3; 2 and 3 do not build: it could be 2, 3 or 4 (the first measured bad one)
    measured, outcome = drive(7, first_bad=3, skipped={2, 3})
    assert outcome.first_bad is None and outcome.could_be == ("2", "3", "4")
    assert set(measured) >= {2, 3}


def test_search_refuses_what_it_cannot_use():
    with pytest.raises(ValueError):
        Search([])
    search = Search(["a", "b"])
    with pytest.raises(ValueError):
        search.record("z", GOOD)
    with pytest.raises(ValueError):
        search.record("a", "maybe")


# -- the ends and the verdicts, with synthetic runs ---------------------------------------------------------------

COMMITS = [Commit(hashlib.sha1(str(i).encode()).hexdigest(), f"commit {i}") for i in range(8)]  # 0 good, 7 bad
INDEX = {c.sha: i for i, c in enumerate(COMMITS)}
SYNTHETIC = "cutlass[config=sm90_tma_coop_128x256x64_c2x1]"  # make_rows's row, renamed to the user's kernel


def run_of(commit: Commit, slowdown: float = 1.0, status: Status = Status.PASS, seed: int = 0, gpu_scale=1.0):
    """A synthetic run of cuBLAS (the baseline) and the user's kernel at 2048^3, 40 samples, CV 0.5%."""
    rid = f"r{commit.short}"
    rows = make_rows(rid, problems=((2048,) * 3,), sweep=False, slowdown={SYNTHETIC: slowdown},
                     statuses={SYNTHETIC: status}, seed=seed, gpu_scale=gpu_scale)
    df = pd.DataFrame([r.to_record() for r in rows])
    df["implementation"] = df["implementation"].replace(SYNTHETIC, KERNEL)
    return receipt_for(rid), df


class FakeMeasurer:
    """Measures commit i as a synthetic run: `slow` from commit index `culprit` on, `broken` commits FAIL,
    `unbuildable` ones have no run (their spec or build failed). Records what it measured."""

    def __init__(self, culprit=None, slow=1.15, broken=(), unbuildable=()):
        self.culprit, self.slow, self.broken, self.unbuildable = culprit, slow, set(broken), set(unbuildable)
        self.measured: list[int] = []

    def __call__(self, commit: Commit) -> Measurement:
        i = INDEX[commit.sha]
        self.measured.append(i)
        if i in self.unbuildable:
            return Measurement(commit, failure="did not build: kernel.cu:3: error: expected ';'")
        slow = self.slow if self.culprit is not None and i >= self.culprit else 1.0
        status = Status.FAIL if i in self.broken else Status.PASS
        return Measurement(commit, run_of(commit, slow, status, seed=i))


def bisect_fake(measurer: FakeMeasurer, threshold=0.03) -> BisectResult:
    result = BisectResult(Path("/repo"), Path("spec.yaml"), COMMITS[0], COMMITS[7], COMMITS[1:], Watch(), threshold)
    return search_history(result, measurer)


def test_fake_history_names_the_culprit_in_log2_steps():
    m = FakeMeasurer(culprit=5)
    result = bisect_fake(m)
    assert result.status == FOUND and result.first_bad == COMMITS[5] and result.exit_code == 1
    assert m.measured[:2] == [0, 7] and result.intermediate_steps <= 3
    step = result.step_of(COMMITS[5])
    kernel = [r for r in step.rows if not r.is_baseline]
    assert kernel[0].verdict == "SLOWER" and kernel[0].ratio_lo > 1.0 and "+15" in kernel[0].change
    text = summary(result)
    assert f"first bad commit: {COMMITS[5].short} commit 5" in text and "SLOWER" in text
    assert "the commit before it" in text and "commit 4" in text


def test_no_slowdown_reports_none_after_the_two_ends():
    m = FakeMeasurer(culprit=None)
    result = bisect_fake(m)
    assert result.status == NONE and result.exit_code == 0 and m.measured == [0, 7]
    assert f"bad commit {COMMITS[7].short} is not slower than good commit {COMMITS[0].short}" in result.message
    assert "nothing to bisect" in result.message


def test_a_fail_counts_as_bad():
    m = FakeMeasurer(culprit=None, broken={3, 4, 5, 6, 7})
    result = bisect_fake(m)
    assert result.status == FOUND and result.first_bad == COMMITS[3]
    assert any(r.status == "FAIL" for r in result.step_of(COMMITS[3]).rows)


def test_a_commit_that_does_not_build_is_skipped_and_its_neighbour_tried():
    m = FakeMeasurer(culprit=5, unbuildable={3})
    result = bisect_fake(m)
    assert result.status == FOUND and result.first_bad == COMMITS[5]
    assert m.measured[2:4] == [3, 4]  # 3 is the middle; it does not build, 4 is measured instead
    assert result.step_of(COMMITS[3]).verdict == SKIP and result.step_of(COMMITS[3]).build_failed


def test_skips_around_the_culprit_give_the_range():
    m = FakeMeasurer(culprit=4, unbuildable={3, 4})
    result = bisect_fake(m)
    assert result.status == RANGE and result.exit_code == 1
    assert result.could_be == [COMMITS[3], COMMITS[4], COMMITS[5]]
    assert "could be any of" in result.message


def test_the_good_end_must_be_good():
    result = bisect_fake(FakeMeasurer(culprit=5, broken={0}))
    assert result.status == "invalid" and result.exit_code == 2
    assert f"good commit {COMMITS[0].short} cannot be the reference" in result.message and "FAIL" in result.message


def test_a_bad_end_that_does_not_build_is_bad_input():
    result = bisect_fake(FakeMeasurer(culprit=5, unbuildable={7}))
    assert result.exit_code == 2 and f"bad commit {COMMITS[7].short} cannot be measured" in result.message


def test_a_slowdown_under_the_threshold_is_no_regression():
    result = bisect_fake(FakeMeasurer(culprit=5, slow=1.01))
    assert result.status == NONE


def test_the_baseline_moving_alone_is_not_a_regression():
    """The whole run 15% slower (a power state), kernel and cuBLAS alike: % of baseline unchanged."""

    class WholeRunSlower(FakeMeasurer):
        def __call__(self, commit):
            i = INDEX[commit.sha]
            self.measured.append(i)
            return Measurement(commit, run_of(commit, seed=i, gpu_scale=1.15 if i >= 5 else 1.0))

    result = bisect_fake(WholeRunSlower())
    assert result.status == NONE, result.message


def test_outputs(tmp_path):
    result = bisect_fake(FakeMeasurer(culprit=5))
    files = write(result, tmp_path)
    md = (tmp_path / "bisect.md").read_text()
    assert [f.name for f in files] == ["bisect.md", "bisect.json"]
    assert f"| `{COMMITS[5].short}` | commit 5 | middle | 2 |" in md and "| **bad** |" in md
    assert f"first bad commit: {COMMITS[5].short} commit 5" in md
    data = json.loads((tmp_path / "bisect.json").read_text())
    assert data["first_bad"]["sha"] == COMMITS[5].sha and data["exit_code"] == 1
    assert [s["verdict"] for s in data["steps"]][:2] == ["reference", "bad"]
    assert as_json(result)["steps"][1]["rows"][0]["change"].startswith("+")


# -- a real repository, a fake measurer ---------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


class TreeMeasurer:
    """Reads the slowdown from the kernel the worktree holds (EXTRA_K_PERCENT), as a GPU would time it."""

    def __init__(self):
        self.trees: list[Path] = []
        self.measured: list[str] = []
        self.prepared = None

    def prepare(self, spec: Path, watch: Watch) -> Watch:
        self.prepared = spec
        assert spec.is_file()
        return Watch(watch.only, watch.shapes, BASELINE, (BASELINE, KERNEL))

    def measure(self, commit: Commit, spec: Path) -> Measurement:
        tree = spec.parents[1]
        self.trees.append(tree)
        self.measured.append(commit.sha)
        assert git(tree, "rev-parse", "HEAD") == commit.sha and not git(tree, "status", "--porcelain")
        (spec.parent / "scratch.txt").write_text("left by a build")  # must not leak into the next commit's tree
        extra = int(re.search(r"#define EXTRA_K_PERCENT (\d+)", (spec.parent / "tiled_gemm.cu").read_text())[1])
        return Measurement(commit, run_of(commit, 1 + extra / 100, seed=len(self.measured)))


@pytest.fixture
def demo(tmp_path):
    repo = tmp_path / "user repo"
    shas = make_history(repo)
    (repo / "kernel" / "tiled_gemm.cu").write_text("// my uncommitted edit\n")  # the user's work in progress
    (repo / "notes.txt").write_text("untracked\n")
    return repo, shas


def user_state(repo: Path) -> tuple:
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), git(repo, "status", "--porcelain"),
            (repo / "kernel" / "tiled_gemm.cu").read_text(), git(repo, "diff", "--cached"))


def test_real_repository_with_a_fake_measurer(demo, tmp_path):
    repo, shas = demo
    before = user_state(repo)
    m = TreeMeasurer()
    lines = []
    result = bisect_repository(repo / "kernel" / "bisect_demo.yaml", "good", "regressed", m, Watch(),
                               tree=tmp_path / "scratch" / "tree", on_step=lambda s, r: lines.append(s.verdict))
    assert result.status == FOUND and result.first_bad.sha == shas["culprit"]
    assert result.first_bad.subject == "tiled_gemm: a first pass over the leading K tiles"
    assert len(result.candidates) == 7 and result.intermediate_steps <= 3 and len(lines) == len(result.steps)
    assert m.measured[:2] == [shas["good"], shas["regressed"]]
    assert set(m.trees) == {tmp_path / "scratch" / "tree"}  # one worktree, one path: the build cache key holds it
    assert not (tmp_path / "scratch" / "tree").exists()  # removed afterwards
    assert "tree" not in git(repo, "worktree", "list") and len(git(repo, "worktree", "list").splitlines()) == 1
    assert user_state(repo) == before  # working tree, index, branch untouched
    assert CULPRIT_INDEX == 5 and result.first_bad.sha == git(repo, "rev-parse", "culprit")


def test_real_repository_without_a_slowdown(demo, tmp_path):
    repo, shas = demo
    m = TreeMeasurer()
    result = bisect_repository(repo / "kernel" / "bisect_demo.yaml", "good", "steady", m, Watch(),
                               tree=tmp_path / "t")
    assert result.status == NONE and result.exit_code == 0 and m.measured == [shas["good"], shas["steady"]]
    assert "nothing to bisect" in result.message


def test_the_worktree_is_removed_on_ctrl_c(demo, tmp_path):
    repo, _ = demo

    class Interrupted(TreeMeasurer):
        def measure(self, commit, spec):
            if len(self.measured) == 2:
                raise KeyboardInterrupt
            return super().measure(commit, spec)

    before = user_state(repo)
    with pytest.raises(KeyboardInterrupt):
        bisect_repository(repo / "kernel" / "bisect_demo.yaml", "good", "regressed", Interrupted(), Watch(),
                          tree=tmp_path / "t")
    assert not (tmp_path / "t").exists() and len(git(repo, "worktree", "list").splitlines()) == 1
    assert user_state(repo) == before


def test_a_second_bisect_of_one_repository_waits_its_turn(demo, tmp_path):
    repo, _ = demo
    with ScratchTree(repo, tmp_path / "t"):
        with pytest.raises(InputError, match="another gemmcompare bisect"):
            ScratchTree(repo, tmp_path / "t").__enter__()


# -- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("good,bad,message", [
    ("nope", "regressed", "good commit 'nope' is not a commit"),
    ("good", "v9", "bad commit 'v9' is not a commit"),
    ("regressed", "good", "is not an ancestor of bad commit"),
    ("steady", "regressed", "is not an ancestor of bad commit"),
    ("good", "good", "the same commit"),
])
def test_bad_commits_are_named(demo, tmp_path, good, bad, message):
    repo, _ = demo
    with pytest.raises(InputError, match=message):
        bisect_repository(repo / "kernel" / "bisect_demo.yaml", good, bad, TreeMeasurer(), Watch(), tree=tmp_path / "t")


def test_not_a_repository_and_spec_outside(tmp_path, demo):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "s.yaml").write_text("name: x\n")
    with pytest.raises(InputError, match="is not inside a git repository"):
        bisect_repository(tmp_path / "plain" / "s.yaml", "a", "b", TreeMeasurer(), Watch())
    repo, _ = demo
    with pytest.raises(InputError, match="does not exist at good commit"):
        bisect_repository(repo / "kernel" / "other.yaml", "good", "regressed", TreeMeasurer(), Watch(),
                          tree=tmp_path / "t")


def test_real_spec_checks_at_the_good_commit(demo, tmp_path):
    """The real measurer's prepare: --only matching nothing, or only the baseline, is bad input (exit 2)."""
    from gemmcompare.bisect.measure import RunCommand

    repo, _ = demo
    spec = repo / "kernel" / "bisect_demo.yaml"
    for only, message in (("nothing_like_it", "matches none of"), ("cublas", "matches only the baseline")):
        with pytest.raises(InputError, match=message):
            bisect_repository(spec, "good", "regressed", RunCommand(tmp_path / "out"), Watch(only=only),
                              tree=tmp_path / "t")
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_the_watched_rows_always_hold_the_baseline(tmp_path):
    from gemmcompare.bisect.measure import check_watch

    repo = tmp_path / "r"
    make_history(repo)
    watch = check_watch(repo / "kernel" / "bisect_demo.yaml", Watch(only="tiled"))
    assert watch.baseline == BASELINE and watch.implementations == (BASELINE, KERNEL)
    assert re.search(watch.regex, BASELINE) and re.search(watch.regex, KERNEL)
    assert not re.search(watch.regex, "library.cublas_lt")


def test_a_spec_with_a_baseline_per_contract_watches_every_one(tmp_path):
    """Each contract's baseline is measured at every step beside the watched kernel, so that each contract's
    rows are judged against their own same-run baseline; none of them counts as the watched kernel."""
    from gemmcompare.bisect.measure import check_watch

    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nproblems: [{m: 64, n: 64, k: 64}]\n"
                    "contracts: [bf16_bf16out_f32acc_tn, e4m3_bf16out_f32acc_tn_tensor]\n"
                    "implementations: [library.cublas, library.cublaslt_fp8, library.torch_matmul]\n"
                    "baseline: {bf16_bf16out_f32acc_tn: library.cublas, e4m3_bf16out_f32acc_tn_tensor: "
                    "library.cublaslt_fp8}\n")
    watch = check_watch(spec, Watch(only="torch"))
    assert watch.baselines == ("library.cublas", "library.cublaslt_fp8")
    assert watch.implementations == ("library.cublas", "library.cublaslt_fp8", "library.torch_matmul")
    assert not any("names no baseline" in n for n in watch.notes)
    with pytest.raises(InputError, match="matches only the baseline library.cublas, library.cublaslt_fp8"):
        check_watch(spec, Watch(only="cublas"))


def test_cli_bad_input_exits_2(demo, tmp_path, capsys):
    from gemmcompare.cli import main

    repo, _ = demo
    spec = str(repo / "kernel" / "bisect_demo.yaml")
    assert main(["bisect", spec, "--good", "nope", "--out", str(tmp_path / "o")]) == 2
    assert "good commit 'nope' is not a commit" in capsys.readouterr().err
    assert main(["bisect", spec, "--good", "regressed", "--bad", "good", "--out", str(tmp_path / "o")]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["bisect", spec, "--good", "good", "--threshold", "5"])
    assert exc.value.code == 2


def test_a_step_whose_spec_is_invalid_is_a_skip(tmp_path):
    """The real measurer: `gemmcompare run` exits 2 on a spec it cannot read, and that commit is skipped."""
    from gemmcompare.bisect.measure import RunCommand

    spec = tmp_path / "broken.yaml"
    spec.write_text("name: broken\nproblems: [}\n")
    m = RunCommand(tmp_path / "out").measure(COMMITS[3], spec)
    assert m.run is None and m.spec_invalid and "cannot be run at this commit" in m.failure
    assert m.log.is_file() and "broken.yaml" in m.log.read_text()


# -- the demo kernel compiles ---------------------------------------------------------------------------------------

@pytest.mark.compile
def test_demo_kernels_compile(tmp_path, nvcc):
    from gemmcompare.build import toolchain

    repo = tmp_path / "r"
    make_history(repo)
    for rev in ("good", "culprit"):
        src = tmp_path / f"{rev}.cu"
        src.write_text(git(repo, "show", f"{rev}:kernel/tiled_gemm.cu"))
        res = toolchain.compile_object(src, "sm_80", tmp_path / f"{rev}.o")
        assert res.returncode == 0, res.stderr + res.stdout
        assert "0 bytes spill stores" in res.stdout + res.stderr


def test_cli_end_to_end_without_a_gpu_exits_3(tmp_path, capsys):
    """The real measurer through the command: a spec with nothing to build (a Python callable, torch.mm as
    the baseline) in a two-commit repository; `gemmcompare run` exits 3 here, and so does bisect, with the
    worktree removed."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: this checks the machine without one")
    from gemmcompare.cli import main

    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "k.py").write_text("def matmul(a, b, c, alpha=1.0, beta=0.0):\n    c.copy_(a.float() @ b.float())\n")
    (repo / "s.yaml").write_text(
        "name: py\nproblems: [{m: 256, n: 256, k: 256}]\ncontracts: [f16_f32acc_tn]\nimplementations:\n"
        "  - library.torch_matmul\n  - python: {name: mine, callable: 'k.py:matmul', contract: f16_f32acc_tn}\n"
        "baseline: library.torch_matmul\n")
    git(repo, "init", "-q")
    for i in range(2):
        (repo / "notes.txt").write_text(f"{i}\n")
        git(repo, "add", ".")
        git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", f"c{i}")
    code = main(["bisect", str(repo / "s.yaml"), "--good", "HEAD~1", "--only", "mine", "--out", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert code == 3, captured
    assert "watching: library.torch_matmul (baseline), python.mine" in captured.out
    assert "no CUDA device" in captured.err
    assert (tmp_path / "o" / "steps").is_dir() and len(git(repo, "worktree", "list").splitlines()) == 1
