"""`gemmcompare bisect`: the first commit of a repository's history that made a kernel slower (or broke it).

  search.py   which commit next, and what the verdicts say (pure logic)
  git.py      the repository, the commits between good and bad, the scratch worktree
  measure.py  the measurer interface; the real one runs `gemmcompare run` per commit
  judge.py    a commit's verdict against the good commit, by compare's rule
  driver.py   the two ends checked, then the search
  output.py   the step lines, bisect.md and bisect.json
"""
