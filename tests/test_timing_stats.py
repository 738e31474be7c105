"""Timing summaries (CPU): statistics from raw samples, in milliseconds."""

import math

from gemmcompare.contracts.timing import median_ci_rel, summarize


def test_summary_fields():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.median == 3.0 and s.min == 1.0 and s.max == 100.0 and s.n == 5
    assert math.isclose(s.mean, 22.0)
    assert s.iqr == 2.0


def test_median_ci_shrinks_with_tight_samples():
    tight = [1.0 + 0.0001 * i for i in range(100)]
    loose = [1.0 + 0.01 * i for i in range(100)]
    assert median_ci_rel(tight) < 0.01 < median_ci_rel(loose)


def test_median_ci_undefined_for_few_samples():
    assert median_ci_rel([1.0, 1.1, 1.2]) == math.inf
