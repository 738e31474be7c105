"""Regression tracking: compare two runs row by row and say, noise-aware, what changed.

Rows are matched on (problem, contract, implementation); the implementation's procedural name carries its
parameters. Each matched pair gets one verdict:

  REGRESSION    the base row PASSed and the candidate row FAILs, CRASHes, TIMEs OUT or does not build
  SLOWER        slower by more than the threshold, and the difference is statistically significant
  FASTER        faster by more than the threshold, and significant
  SAME          the difference is within the threshold and the measurement could have seen a change of the
                threshold's size (the ratio's confidence interval is no wider than the threshold each side)
  UNKNOWN       the data cannot tell: too few samples, no noise estimate, a change beyond the threshold that the
                noise could explain, or noise wider than the threshold
  FIXED         a failing row (FAIL/CRASH/TIMEOUT/BUILD_ERROR) now PASSes
  SKIPPED       a passing row is now a SKIP (not measured; not counted as a regression)
  NOT_COMPARED  neither row passed, so there is no time to compare (the statuses are shown)
  NEW / GONE    the row exists only in the candidate / only in the base

Exit code 1 when any row is REGRESSION or SLOWER, else 0 (CI gates on it).

The exact timing rule, in log space: with r = (candidate time / base time) as a point estimate (ratio of the
medians), d = ln r, tau = ln(1 + threshold) and [lo, hi] a confidence interval of d:
  |d| >  tau and (lo > 0 or hi < 0)      -> SLOWER (d > 0) / FASTER (d < 0)
  |d| >  tau otherwise                   -> UNKNOWN (beyond the threshold, within the noise)
  |d| <= tau and (hi - lo) / 2 <= tau    -> SAME
  |d| <= tau otherwise                   -> UNKNOWN (too noisy to rule out a change of the threshold's size)
The interval comes from the raw samples (samples_ms) when both rows have at least MIN_SAMPLES: the
distribution-free Mann-Whitney (Hodges-Lehmann) interval for the shift between the two log-time samples.
Without samples it is d +/- sqrt(h_b^2 + h_c^2) from the rows' stored relative half-widths of the median's CI.
The intervals are simultaneous over the m rows judged on timing (Bonferroni: each at confidence 1 - 0.05/m), so
that two runs of the same code on a quiet machine make the CI gate fail less than one time in twenty, however
many rows the comparison holds.

On one GPU a time verdict of SLOWER or FASTER is then held against the machine's state, because a power cap
moves every row of a run (DEVICE.md: 8192^3 cuBLAS reads 1.45 or 1.66 ms by power state alone):
  - a row with a same-run baseline keeps it only when its % of that baseline says the same (judged by the
    rule above on base % / candidate %, with the row's and the baseline's CIs); when the % is SAME the
    baseline moved as much and the row is SAME; otherwise UNKNOWN, saying so. When either side was
    THROTTLED (or the SM clocks differ), the times scaled to the maximum clock must also differ beyond the
    threshold that way, else UNKNOWN: a cap does not hit every row of a run alike;
  - the baseline row itself (nothing to hold it against) is UNKNOWN when either run's row was THROTTLED
    (most telemetry samples capped) or their SM clocks differ by more than the threshold.
Every judged row shows whether either side was THROTTLED.

Runs from different GPUs are judged on normalised figures instead of times: % of the same-run baseline for
ordinary rows, % of the datasheet peak for the baseline rows themselves (their % of baseline is 100 by
definition). Higher is better there, so r = base % / candidate % (a time-equivalent ratio: > 1 is slower),
and the interval combines the medians' CIs of the row and of its baseline. Raw times are shown, never judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .energy_verdicts import energy_fields
from .progress import SILENT, Progress
from .report.data import THROTTLED_MOSTLY, gpu_name, normalise_rows, problem_sort_key, run_label, timing_summary
from .report.labels import legend_labels
from .report.writers import write_table_page
from .verdict_rule import (CONFIDENCE, MAX_SAMPLES, MIN_SAMPLES, _positive, _symmetric, _z, judge,  # noqa: F401
                           median_log_halfwidth, shift_interval)


FAILED = ("FAIL", "CRASH", "TIMEOUT", "BUILD_ERROR")
REGRESSING = ("REGRESSION", "SLOWER")
VERDICT_ORDER = ["REGRESSION", "SLOWER", "UNKNOWN", "FASTER", "FIXED", "SKIPPED", "NOT_COMPARED", "NEW", "GONE",
                 "SAME"]
KEY = ["problem", "contract", "implementation"]
RATIO_TICKS = [0.25, 0.33, 0.5, 0.57, 0.67, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 1.0, 1.02, 1.03, 1.05, 1.1, 1.2, 1.25,
               1.4, 1.5, 1.75, 2.0, 3.0, 4.0]

RunData = tuple[dict, pd.DataFrame]


def ratio_ticks(half_width: float) -> list[float]:
    """Labelled ratios for a log axis that spans exp(-half_width)..exp(half_width): 1 and RATIO_TICKS, none
    closer to another than a ninth of the axis (at most ~9 labels). Each side is filled from its edge
    inwards, so the label furthest out sits near the rows furthest out."""
    gap = 2 * half_width / 9
    ticks = [1.0]
    for side in ([t for t in RATIO_TICKS if t > 1], [t for t in RATIO_TICKS if t < 1]):
        picked: list[float] = []  # distances from 1 in log space, outermost first
        for tick in sorted(side, key=lambda t: -abs(math.log(t))):
            d = abs(math.log(tick))
            if gap <= d <= half_width and all(p - d >= gap for p in picked):
                picked.append(d)
                ticks.append(tick)
    return ticks


# -- the comparison -------------------------------------------------------------------------------------------

@dataclass
class Comparison:
    table: pd.DataFrame
    threshold: float
    normalised: bool
    base_label: str
    cand_label: str
    base_gpu: str
    cand_gpu: str
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        vc = self.table["verdict"].value_counts() if len(self.table) else pd.Series(dtype=int)
        return {v: int(vc[v]) for v in VERDICT_ORDER if v in vc}

    @property
    def regressed(self) -> bool:
        return bool(self.table["verdict"].isin(REGRESSING).any()) if len(self.table) else False

    @property
    def exit_code(self) -> int:
        return 1 if self.regressed else 0

    @property
    def basis(self) -> str:
        if self.normalised:
            return (f"normalised figures (% of same-run baseline; % of peak for the baseline rows), because the runs "
                    f"are from different GPUs ({self.base_gpu} vs {self.cand_gpu}); raw times are shown, not judged")
        return f"median time on {self.cand_gpu or 'the same GPU'}"

    def summary_text(self, max_lines: int = 25) -> str:
        lines = [f"compare: {self.base_label} ({self.base_gpu or 'unknown GPU'}) -> {self.cand_label} "
                 f"({self.cand_gpu or 'unknown GPU'}), threshold {100 * self.threshold:g}%",
                 f"judged on: {self.basis}",
                 f"{len(self.table)} rows: " + ", ".join(f"{n} {v}" for v, n in self.counts.items())]
        shown = self.table[~self.table["verdict"].isin(["SAME", "NEW", "GONE"])]
        for _, r in shown.head(max_lines).iterrows():
            lines.append(f"  {r['verdict']:<12} {r['contract']} {r['problem']} {r['implementation']}: {r['detail']}")
        if len(shown) > max_lines:
            lines.append(f"  ... {len(shown) - max_lines} more in the table")
        lines.extend(f"note: {n}" for n in self.notes)
        if "throttled" in self.table and len(self.table):
            hot = int((self.table["throttled"].fillna("") != "").sum())
            if hot:
                lines.append(f"note: {hot} rows were THROTTLED (a power or thermal cap in most sample batches) in one "
                             f"run or both: their times follow the card's power state (see the throttled and "
                             f"ms @max clock columns)")
        energy = self.table["energy_verdict"].fillna("") if "energy_verdict" in self.table else pd.Series(dtype=str)
        if len(energy) and (energy != "").any():
            counts = energy[energy != ""].value_counts()
            lines.append("energy (J per GEMM, same rule, not gating): "
                         + ", ".join(f"{n} {v}" for v, n in counts.items()))
            for _, r in self.table[energy.isin(["MORE_ENERGY", "LESS_ENERGY"])].head(max_lines).iterrows():
                lines.append(f"  {r['energy_verdict']:<12} {r['contract']} {r['problem']} {r['implementation']}: "
                             f"{r['energy_detail']}")
        lines.append("result: REGRESSED (exit 1)" if self.regressed else "result: no regression (exit 0)")
        return "\n".join(lines)


def _fmt_change(d: float, lo: float | None, hi: float | None, what: str) -> str:
    text = f"{100 * math.expm1(d):+.1f}% {what}"
    if lo is not None and hi is not None:
        text += f" (CI {100 * math.expm1(lo):+.1f}..{100 * math.expm1(hi):+.1f}%)"
    return text


def _last_per_key(df: pd.DataFrame) -> dict[tuple, pd.Series]:
    """(problem, contract, implementation) -> the last row of that key (named by it), in the order of those
    rows. A dict of rows, not a frame indexed by KEY: the dashboard compares small frames hundreds of times,
    and building and searching that index was a third of each comparison."""
    last = {key: i for i, key in enumerate(zip(*(df[k] for k in KEY)))}
    out = {}
    for key, i in sorted(last.items(), key=lambda item: item[1]):
        row = df.iloc[i]
        row.name = key
        out[key] = row
    return out


def _baseline_halfwidths(df: pd.DataFrame, conf: float) -> dict[tuple[str, str], float | None]:
    """(contract, problem) -> ln half-width of the CI of that run's baseline median."""
    base = df[df["is_baseline"]]
    return {(c, p): median_log_halfwidth(s, rel, conf)
            for c, p, s, rel in zip(base["contract"], base["problem"], base["samples_ms"], base["median_ci_rel"])}


def _throttled(row: pd.Series) -> float | None:
    tf = row.get("throttled_fraction")
    return float(tf) if tf is not None and np.isfinite(tf) and tf > THROTTLED_MOSTLY else None


def throttle_text(b: pd.Series, c: pd.Series) -> str:
    """'' or 'THROTTLED base 67%, candidate 91%': which side's samples were mostly power- or heat-capped."""
    sides = [f"{name} {100 * tf:.0f}%" for name, tf in (("base", _throttled(b)), ("candidate", _throttled(c)))
             if tf is not None]
    return "THROTTLED " + ", ".join(sides) if sides else ""


def _clock_text(b: pd.Series, c: pd.Series) -> str:
    bc, cc = b.get("sm_clock_mhz"), c.get("sm_clock_mhz")
    if bc is None or cc is None or not (np.isfinite(bc) and np.isfinite(cc)):
        return ""
    return f"SM clock {bc:.0f} -> {cc:.0f} MHz"


def _clocks_differ(b: pd.Series, c: pd.Series, threshold: float) -> bool:
    """Whether both rows recorded their SM clock and the two differ by more than the threshold."""
    bc, cc = b.get("sm_clock_mhz"), c.get("sm_clock_mhz")
    return (all(v is not None and np.isfinite(v) and v > 0 for v in (bc, cc))
            and abs(math.log(cc / bc)) > math.log1p(threshold))


def _share_change(b: pd.Series, c: pd.Series, metric: str, base_bw: dict, cand_bw: dict,
                  conf: float) -> tuple[float, tuple[float, float] | None]:
    """(d, interval) for a share of a reference (`pct_of_baseline` or `pct_of_peak`; both > 0), time-
    equivalent: d = log(base share / candidate share), > 0 is slower. A % of baseline carries its
    baseline's noise too (base_bw, cand_bw: each run's baseline half-width by contract and problem)."""
    d = math.log(b[metric] / c[metric])
    hs = [median_log_halfwidth(b["samples_ms"], b["median_ci_rel"], conf),
          median_log_halfwidth(c["samples_ms"], c["median_ci_rel"], conf)]
    if metric == "pct_of_baseline":
        problem, contract, _ = b.name
        hs += [base_bw.get((contract, problem)), cand_bw.get((contract, problem))]
    return d, _symmetric(d, hs)


def _pct_verdict(b: pd.Series, c: pd.Series, base_bw: dict, cand_bw: dict, threshold: float,
                 conf: float) -> tuple[str, float, tuple[float, float] | None] | None:
    """The verdict on % of the same-run baseline (time-equivalent: > 0 is slower), for a row that is not the
    baseline; None when either run lacks it."""
    bv, cv = b.get("pct_of_baseline"), c.get("pct_of_baseline")
    if bool(b["is_baseline"] or c["is_baseline"]) or not (
            bv is not None and cv is not None and np.isfinite(bv) and np.isfinite(cv) and bv > 0 and cv > 0):
        return None
    d, interval = _share_change(b, c, "pct_of_baseline", base_bw, cand_bw, conf)
    return judge(d, interval, threshold)[0], d, interval


def _clock_explains(verdict: str, b: pd.Series, c: pd.Series, threshold: float) -> str:
    """'' or why the recorded clocks explain the change: when either side was THROTTLED or the clocks differ,
    and the times at the maximum clock (median_ms * sm_clock / max_clock) do not differ beyond the threshold
    in the verdict's direction."""
    bc, cc = b.get("sm_clock_mhz"), c.get("sm_clock_mhz")
    ba, ca = b.get("median_ms_at_max_clock"), c.get("median_ms_at_max_clock")
    known = all(v is not None and np.isfinite(v) and v > 0 for v in (bc, cc, ba, ca))
    if not known:
        return ""
    hot = bool(throttle_text(b, c)) or _clocks_differ(b, c, threshold)
    d = math.log(ca / ba)
    holds = d > math.log1p(threshold) if verdict == "SLOWER" else d < -math.log1p(threshold)
    if not hot or holds:
        return ""
    return (f"at the recorded clocks ({bc:.0f} -> {cc:.0f} MHz) the times are {ba:.4g} -> {ca:.4g} ms @max clock "
            f"({100 * math.expm1(d):+.1f}%): the power state can explain it")


def _same_gpu_check(verdict: str, reason: str, b: pd.Series, c: pd.Series, base_bw: dict, cand_bw: dict,
                    threshold: float, conf: float) -> tuple[str, str]:
    """A time verdict on one GPU, held against the state the two runs were in. A change of time is the
    kernel's only when the same-run baseline did not move as much (its % of baseline agrees) or, for the
    baseline row itself, when neither run was throttled and both ran at the same clock."""
    if verdict not in ("SLOWER", "FASTER"):
        return verdict, reason
    pct = _pct_verdict(b, c, base_bw, cand_bw, threshold, conf)
    if pct is not None:
        p_verdict, d, interval = pct
        what = f"% of the same-run baseline {b['pct_of_baseline']:.1f} -> {c['pct_of_baseline']:.1f}"
        if p_verdict == verdict:
            # a power cap need not hit the rows of a run alike (a longer kernel heats more): when one side was
            # capped, the times scaled to the recorded clocks must show the change too
            explained = _clock_explains(verdict, b, c, threshold)
            if explained:
                return "UNKNOWN", f"{what}, but {explained}"
            return verdict, f"{reason}; {what} agrees"
        if p_verdict == "SAME":
            return "SAME", (f"{what}, within the threshold: the baseline moved as much (the machine's state, "
                            f"not the kernel)")
        return "UNKNOWN", (f"{what} ({_fmt_change(d, *(interval or (None, None)), 'time-equivalent')}: "
                           f"{p_verdict}): the baseline moved too, so the power state or the machine may explain it")
    state = throttle_text(b, c)
    if state or _clocks_differ(b, c, threshold):
        why = state or _clock_text(b, c)
        return "UNKNOWN", f"{why}: the power state can explain a change this size; no same-run baseline to tell"
    return verdict, reason


def _timed(b: pd.Series, c: pd.Series, normalised: bool, base_bw: dict, cand_bw: dict, threshold: float,
           conf: float) -> dict:
    """Verdict fields for a pair of PASS rows (indexed by problem, contract, implementation), with intervals at
    confidence `conf`."""
    why, shift = None, 0.0
    if not normalised:  # same GPU: median times, lower is better
        metric, what = "median_ms", "time"
        bs, cs = _positive(b["samples_ms"]), _positive(c["samples_ms"])
        bv = b["median_ms"] if np.isfinite(b["median_ms"]) else (np.median(bs) if len(bs) else np.nan)
        cv = c["median_ms"] if np.isfinite(c["median_ms"]) else (np.median(cs) if len(cs) else np.nan)
        shift = launch_window_shift(b, c)
        if shift:  # both CUPTI, with different launch windows: the base's figures on the candidate's window
            bs, bv = bs + shift, bv + shift
        if not (bv > 0 and cv > 0):
            return dict(verdict="UNKNOWN", detail="no median time", metric=metric)
        d, interval = math.log(cv / bv), None
        if len(bs) >= MIN_SAMPLES and len(cs) >= MIN_SAMPLES:
            interval = shift_interval(bs, cs, conf)
        elif len(bs) or len(cs):  # samples, but too few to trust: UNKNOWN rather than a verdict from a handful
            why = f"too few samples ({len(bs)} vs {len(cs)}, need {MIN_SAMPLES})"
        else:  # no raw samples at all (a trimmed file): the rows' stored CI half-widths
            interval = _symmetric(d, [median_log_halfwidth(None, r["median_ci_rel"], conf) for r in (b, c)])
        prefix = ""
    else:  # different GPUs: % of baseline (% of peak for the baseline rows themselves), higher is better
        use_peak = bool(b["is_baseline"] or c["is_baseline"]) or not (
            np.isfinite(b["pct_of_baseline"]) and np.isfinite(c["pct_of_baseline"]))
        metric, what = ("pct_of_peak" if use_peak else "pct_of_baseline"), "time-equivalent"
        bv, cv = b[metric], c[metric]
        if not (np.isfinite(bv) and np.isfinite(cv) and bv > 0 and cv > 0):
            return dict(verdict="UNKNOWN", detail=f"no {metric} in both runs", metric=metric)
        d, interval = _share_change(b, c, metric, base_bw, cand_bw, conf)  # d > 0: a smaller share, slower
        prefix = f"{'% of peak' if use_peak else '% of baseline'} {bv:.1f} -> {cv:.1f}, "
    verdict, reason = judge(d, interval, threshold)
    if why is None and not normalised:
        verdict, reason = _same_gpu_check(verdict, reason, b, c, base_bw, cand_bw, threshold, conf)
    state = throttle_text(b, c)
    if state and state not in reason:
        prefix = f"{state}; {prefix}"
    bm, cm = b.get("timing_method") or "", c.get("timing_method") or ""
    if bm and cm and bm != cm:
        prefix += f"timed with {bm} vs {cm}, "
    if shift:
        prefix += (f"base's CUPTI spans on the candidate's launch window ({_window_ms(b) * 1e3:.2f} -> "
                   f"{_window_ms(c) * 1e3:.2f} us), ")
    lo, hi = interval if interval else (None, None)
    return dict(verdict=verdict, detail=f"{prefix}{_fmt_change(d, lo, hi, what)}: {why or reason}", metric=metric,
                base_value=bv, cand_value=cv, ratio=math.exp(d), ratio_lo=None if lo is None else math.exp(lo),
                ratio_hi=None if hi is None else math.exp(hi))


def _window_ms(row) -> float:
    """The launch window a CUPTI row's figure holds (contracts/launch_window.py); 0 for rows timed before
    it existed."""
    timing = row.get("timing")
    value = timing.get("launch_window_ms") if isinstance(timing, dict) else None
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def launch_window_shift(b, c) -> float:
    """What to add to the base's times so that two CUPTI rows with different launch windows compare one
    definition of a launch (a row from before the window read 0.8 us short on an H200: at 256^3 a false
    +28%); 0 when either row was timed by events or both carry the same window."""
    if (b.get("timing_method") or "") != "cupti" or (c.get("timing_method") or "") != "cupti":
        return 0.0
    return _window_ms(c) - _window_ms(b)


def _first_line(reason: str) -> str:
    text = reason.strip()
    return f": {text.splitlines()[0][:120]}" if text else ""


def _status_verdict(bs: str, cs: str, c_reason: str) -> tuple[str, str] | None:
    """The verdict a pair of statuses settles on its own (None when both PASS: the times decide)."""
    if bs == "PASS" and cs in FAILED:
        return "REGRESSION", f"PASS -> {cs}{_first_line(c_reason)}"
    if bs == "PASS" and cs == "SKIP":
        return "SKIPPED", f"PASS -> SKIP{_first_line(c_reason)}"
    if bs in FAILED and cs == "PASS":
        return "FIXED", f"{bs} -> PASS"
    if bs != "PASS" and cs == "PASS":
        return "NEW", f"{bs} -> PASS (first measurement)"
    if bs != "PASS" and cs != "PASS":
        return "NOT_COMPARED", f"{bs} -> {cs}: no passing row to time"
    return None


_CARRY = ["status", "median_ms", "tflops", "pct_of_baseline", "pct_of_peak", "n_samples", "max_rel_err",
          "max_rel_err_orig", "throttled_fraction", "sm_clock_mhz", "median_ms_at_max_clock", "timing_method",
          "energy_j_per_gemm", "energy_ci_rel", "avg_power_w", "energy_source"]


def compare(base: RunData, cand: RunData, threshold: float = 0.03, *, confidence: float = CONFIDENCE,
            base_label: str | None = None, cand_label: str | None = None) -> Comparison:
    """Compare a candidate run with a base run. base and cand are (receipt, rows) pairs, as Store/load_result_file
    give them; threshold is the smallest relative change that counts; confidence the simultaneous confidence of
    the intervals. Returns a Comparison (table, counts, exit_code, summary_text())."""
    if not threshold > 0:
        raise ValueError(f"threshold must be positive, got {threshold}")
    (b_receipt, b_rows), (c_receipt, c_rows) = base, cand
    b_df, c_df = normalise_rows(b_rows), normalise_rows(c_rows)
    b_gpu, c_gpu = gpu_name(b_receipt), gpu_name(c_receipt)
    normalised = bool(b_gpu and c_gpu and b_gpu.strip().lower() != c_gpu.strip().lower())
    notes = []
    if not (b_gpu and c_gpu):
        notes.append("the GPU of " + " and ".join(x for x, g in (("the base", b_gpu), ("the candidate", c_gpu))
                                                  if not g) + " is not recorded: assumed the same, times judged")
    bt, ct = timing_summary(b_receipt, b_df), timing_summary(c_receipt, c_df)
    for key in sorted(set(bt) | set(ct)):
        if key in ("method", "l2", "l2_policy", "graph", "cuda_graph") and bt.get(key) != ct.get(key):
            notes.append(f"timing setting '{key}' differs: {bt.get(key)} (base) vs {ct.get(key)} (candidate)")
    b_contracts = (b_receipt or {}).get("contracts") or {}
    c_contracts = (c_receipt or {}).get("contracts") or {}
    if isinstance(b_contracts, dict) and isinstance(c_contracts, dict):
        for name in sorted(set(b_contracts) & set(c_contracts)):
            if b_contracts[name] != c_contracts[name]:
                notes.append(f"contract '{name}' is defined differently in the two runs")

    bi, ci = _last_per_key(b_df), _last_per_key(c_df)
    records, timed = [], []
    for key in dict.fromkeys(list(bi) + list(ci)):
        rec: dict[str, Any] = dict(zip(KEY, key))
        b, c = bi.get(key), ci.get(key)
        for side, row in (("base", b), ("cand", c)):
            for col in _CARRY:
                rec[f"{side}_{col}"] = None if row is None else row[col]
        rec["is_baseline"] = bool((b is not None and b["is_baseline"]) or (c is not None and c["is_baseline"]))
        rec["throttled"] = throttle_text(b, c) if b is not None and c is not None else ""
        if b is None:
            rec.update(verdict="NEW", detail=f"only in the candidate ({c['status']})")
        elif c is None:
            rec.update(verdict="GONE", detail=f"only in the base ({b['status']})")
        else:
            status = _status_verdict(b["status"], c["status"], c["reason"])
            if status:
                rec.update(verdict=status[0], detail=status[1])
            else:
                timed.append((rec, b, c))
        records.append(rec)
    # simultaneous intervals over every row judged on timing (Bonferroni)
    conf = 1 - (1 - confidence) / max(1, len(timed))
    b_bw, c_bw = _baseline_halfwidths(b_df, conf), _baseline_halfwidths(c_df, conf)
    for rec, b, c in timed:
        rec.update(_timed(b, c, normalised, b_bw, c_bw, threshold, conf))
        rec.update(energy_fields(b, c, normalised, threshold, conf))  # beside the time's, by the same rule
    table = pd.DataFrame(records)
    for col in ("metric", "base_value", "cand_value", "ratio", "ratio_lo", "ratio_hi", "energy_verdict",
                "energy_detail", "energy_ratio", "energy_ratio_lo", "energy_ratio_hi"):
        if col not in table:
            table[col] = None
    if len(table):
        table["_v"] = table["verdict"].map(VERDICT_ORDER.index)
        table["_p"] = table["problem"].map(problem_sort_key)
        table = table.sort_values(["_v", "contract", "_p", "implementation"]).drop(columns=["_v", "_p"])
        table = table.reset_index(drop=True)
    first = ["problem", "contract", "implementation", "verdict", "detail", "metric", "base_value", "cand_value",
             "ratio", "ratio_lo", "ratio_hi"]
    table = table[[c for c in first if c in table] + [c for c in table.columns if c not in first]]

    if not normalised and len(table):
        moved = table[table["is_baseline"] & table["verdict"].isin(["SLOWER", "FASTER"])]
        for _, r in moved.iterrows():
            notes.append(f"the baseline itself is {r['verdict']} in {r['contract']} {r['problem']} "
                         f"({100 * (r['ratio'] - 1):+.1f}% time): the machine, driver or library may have changed, "
                         f"not only the kernels")
    return Comparison(table, threshold, normalised, base_label or run_label(b_receipt, b_df, "base"),
                      cand_label or run_label(c_receipt, c_df, "candidate"), b_gpu, c_gpu, notes)


# -- output ---------------------------------------------------------------------------------------------------

DISPLAY_COLUMNS = [("verdict", "verdict"), ("contract", "contract"), ("problem", "problem"),
                   ("implementation", "implementation"), ("base_status", "base"), ("cand_status", "candidate"),
                   ("base_median_ms", "base ms"), ("cand_median_ms", "cand ms"),
                   ("base_median_ms_at_max_clock", "base ms @max clock"),
                   ("cand_median_ms_at_max_clock", "cand ms @max clock"), ("base_pct_of_baseline", "base %bl"),
                   ("cand_pct_of_baseline", "cand %bl"), ("throttled", "throttled"), ("ratio", "ratio"),
                   ("detail", "detail"), ("base_energy_j_per_gemm", "base J/GEMM"),
                   ("cand_energy_j_per_gemm", "cand J/GEMM"), ("energy_verdict", "energy"),
                   ("energy_detail", "energy detail")]


def display_comparison(table: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=table.index)
    for col, header in DISPLAY_COLUMNS:
        if col not in table:
            continue
        vals = table[col]
        if col.endswith(("_ms", "_ms_at_max_clock", "_j_per_gemm")):  # times and energies: 4 significant digits
            vals = [f"{v:.4g}" if isinstance(v, (int, float)) and np.isfinite(v) else "" for v in vals]
        elif "pct" in col:
            vals = [f"{v:.1f}" if isinstance(v, (int, float)) and np.isfinite(v) else "" for v in vals]
        elif col == "ratio":
            vals = [f"{v:.3f}" if isinstance(v, (int, float)) and np.isfinite(v) else "" for v in vals]
        else:
            vals = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in vals]
        out[header] = vals
    return out


def plot_ratios(comp: Comparison, out_dir: Path, max_rows: int = 60) -> tuple[list[Path], str]:
    """Ratio per row with its CI, coloured by verdict, the threshold band shaded. Returns (files, caption)."""
    from matplotlib.figure import Figure  # plotting loads only when a comparison is drawn
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from .report.plots import save_figure

    t = comp.table
    timed = t[pd.to_numeric(t["ratio"], errors="coerce").notna()].copy()
    broken = t[t["verdict"] == "REGRESSION"]
    caption_bits = []
    if timed.empty and broken.empty:
        return [], "no row with a ratio to draw"
    timed["_abs"] = np.abs(np.log(timed["ratio"].astype(float)))
    timed = timed.sort_values(["_abs"], ascending=False)
    room = max_rows - len(broken)
    if len(timed) > room:
        caption_bits.append(f"{len(timed) - room} rows with the smallest changes left out")
        timed = timed.head(max(room, 0))
    rows = pd.concat([broken, timed.drop(columns="_abs")], ignore_index=True)
    rows["_p"] = rows["problem"].map(problem_sort_key)
    rows = rows.sort_values(["contract", "_p", "implementation"], ascending=False).reset_index(drop=True)
    short = legend_labels(rows["implementation"])
    several = rows["contract"].nunique() > 1
    labels = [f"{short[r['implementation']]}  {r['problem']}" + (f"  [{r['contract']}]" if several else "")
              for _, r in rows.iterrows()]
    colors = {"SLOWER": "#c62828", "FASTER": "#2e7d32", "SAME": "#546e7a", "UNKNOWN": "#f9a825",
              "REGRESSION": "#b71c1c"}
    fig = Figure(figsize=(9, 0.28 * len(rows) + 1.6))
    ax = fig.add_subplot()
    tau = 1 + comp.threshold
    ax.axvspan(1 / tau, tau, color="#e0e0e0", zorder=0, label=f"threshold ±{100 * comp.threshold:g}%")
    ax.axvline(1, color="black", linewidth=0.8)
    finite = pd.to_numeric(rows["ratio"], errors="coerce")
    lo_all = pd.to_numeric(rows["ratio_lo"], errors="coerce").fillna(finite)
    hi_all = pd.to_numeric(rows["ratio_hi"], errors="coerce").fillna(finite)
    for i, r in rows.iterrows():
        if r["verdict"] == "REGRESSION":
            ax.text(1, i, f"REGRESSION: {r['detail'][:40]}", va="center", ha="center", fontsize=7,
                    color="white", bbox=dict(boxstyle="round,pad=0.2", fc=colors["REGRESSION"], ec="none"))
            continue
        x, lo, hi = finite[i], lo_all[i], hi_all[i]
        col = colors.get(r["verdict"], "grey")
        ax.errorbar([x], [i], xerr=[[max(x - lo, 0)], [max(hi - x, 0)]], fmt="o" if not r["is_baseline"] else "s",
                    color=col, markersize=5, capsize=2, linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    span = np.nanmax(np.abs(np.log(np.concatenate([lo_all.dropna(), hi_all.dropna(), [tau * 1.02]]))))
    ax.set_xscale("log")
    ax.set_xlim(math.exp(-span * 1.15), math.exp(span * 1.15))
    ax.xaxis.set_major_locator(FixedLocator(ratio_ticks(span * 1.15)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.3g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(-0.7, len(rows) - 0.3)
    what = ("candidate time / base time" if not comp.normalised
            else "base % / candidate % (time-equivalent; normalised across GPUs)")
    ax.set_xlabel(f"{what}; > 1 is slower (bars: simultaneous 95% CI)")
    ax.grid(True, axis="x", alpha=0.3, which="both")
    handles = [ax.plot([], [], "o", color=c, label=v)[0] for v, c in colors.items()
               if v in set(rows["verdict"]) and v != "REGRESSION"]
    ax.legend(handles=handles + [ax.patches[0]], fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    if comp.normalised:
        title = (f"{comp.base_label} ({comp.base_gpu}) → {comp.cand_label} ({comp.cand_gpu}): "
                 f"judged on % of baseline / % of peak")
    else:
        title = f"{comp.base_label} → {comp.cand_label} on {comp.cand_gpu or 'unknown GPU'}"
    ax.set_title(title, fontsize=9)
    files = save_figure(fig, out_dir, "compare_ratios")
    new_gone = int(t["verdict"].isin(["NEW", "GONE", "SKIPPED", "FIXED", "NOT_COMPARED"]).sum())
    if new_gone:
        caption_bits.append(f"{new_gone} rows without two timed PASS rows (NEW, GONE, FIXED, SKIPPED, NOT_COMPARED) "
                            f"are in the table only")
    return files, "; ".join(caption_bits)


def write_comparison(comp: Comparison, out_dir: str | Path, progress: Progress = SILENT) -> list[Path]:
    """compare.csv (full precision), compare.md, compare.html (plot embedded) and compare_ratios.png/.svg;
    `progress` hears of the plot and the pages as each is written."""
    with progress.step("plot") as step:
        plot_files, caption = plot_ratios(comp, Path(out_dir))
        step.done = f"drew {plot_files[0].name if plot_files else 'no plot'}"
    with progress.step("pages") as step:
        files = write_table_page(
            out_dir, "compare", f"gemmcompare compare: {comp.base_label} → {comp.cand_label}", comp.table,
            display_comparison(comp.table), plot_files=plot_files, caption=caption,
            preamble=comp.summary_text(max_lines=0), rule=RULE_TEXT.format(t=100 * comp.threshold),
            cell_class=lambda text: f"verdict-{text}" if text in VERDICT_ORDER else None)
        step.done = "wrote " + ", ".join(Path(f).name for f in files[:3])
    return files


RULE_TEXT = """Rule (threshold {t:g}%): r = candidate time / base time (ratio of medians; across GPUs,
base % / candidate %), d = ln r, tau = ln(1 + threshold), [lo, hi] = CI of d, simultaneous 95% over the
m rows judged on timing (each at 1 - 0.05/m; Mann-Whitney / Hodges-Lehmann on the log samples; across GPUs,
from the medians' CIs of the row and of its baseline).
SLOWER/FASTER: |d| > tau and the CI excludes 0.  SAME: |d| <= tau and (hi - lo)/2 <= tau.  UNKNOWN otherwise.
Same GPU: a SLOWER/FASTER time stands only if the row's % of the same-run baseline gives the same verdict (SAME
there: SAME, the baseline moved as much; else UNKNOWN) and, when either side was THROTTLED or the clocks differ,
the times at the maximum clock differ beyond the threshold too; the baseline row itself is UNKNOWN when either
side was THROTTLED or the SM clocks differ by more than the threshold.
REGRESSION: PASS -> FAIL/CRASH/TIMEOUT/BUILD_ERROR.  Exit code 1 on any REGRESSION or SLOWER row.
Energy (same GPU, rows with an energy figure): the same rule on r = candidate J per GEMM / base J per GEMM, from
the per-batch energies: MORE_ENERGY / LESS_ENERGY / SAME / UNKNOWN, shown beside the time verdict, not gating.
"""
