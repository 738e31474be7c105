"""Reports from synthetic stored runs: tables, plots, HTML, the peaks table, and the report CLI (CPU only).

The helpers at the top (make_rows, store_run, RECEIPT) build runs the way the runner does (Result rows in a
Store and a RunFolder); tests/test_compare.py imports them.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gemmcompare.peaks import compute_class, device_peaks, peak_for
from gemmcompare.report import PLOT_KINDS, build_report
from gemmcompare.report.data import normalise_rows
from gemmcompare.report.labels import legend_labels, split_name, wrap
from gemmcompare.report.tables import display_table, markdown_table, summary_table
from gemmcompare.results import Result, Status
from gemmcompare.store import RunFolder, Store, load_result_file
from gemmcompare.store.run_folder import exact_floats

CONTRACT = "f16_f32acc_tn"
BASELINE = "library.cublas"
MMA = "mma_sync[block=128x128x32,smem={smem},stages={stages},warps=4]"


def receipt_for(run_id: str, gpu: str = "NVIDIA H200", **extra) -> dict:
    receipt = {
        "run_id": run_id, "gpu": gpu, "cc": "9.0", "sm_count": 132, "l2_bytes": 60 * 2**20, "driver": "570.00",
        "cuda": "13.0", "torch": "2.11.0", "cutlass": "4.2.0", "nvcc": "13.0", "gemmcompare_version": "0.1.0",
        "git_commit": "abc1234", "git_dirty": False, "spec_hash": "deadbeef",
        "contracts": {CONTRACT: "A f16 row-major, B f16 col-major, C f32 row-major, accumulate f32, math strict"},
        "timing": {"method": "cuda_events", "l2": "flush", "target_noise": 0.01},
        "tolerance": {"rule": "|C-R| <= atol + rtol*|R| + c*u_acc*sqrt(K)*(|A|.|B|)", "c": 2.0},
    }
    receipt.update(extra)
    return receipt


def samples_for(median_ms: float, cv: float, n: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(median_ms * (1 + cv * rng.standard_normal(n)))


def result_row(run_id, problem, impl, samples, *, family=None, params=None, status=Status.PASS, is_baseline=False,
               baseline_median=None, peak=989.4, reason="", errs=(1e-3, 2e-2)) -> Result:
    m, n, k = problem
    flops = 2 * m * n * k
    s = sorted(samples)
    med = statistics.median(s) if s else None
    q1, q3 = (np.percentile(s, [25, 75]) if s else (None, None))
    stdev = statistics.stdev(s) if len(s) > 1 else None
    tflops = flops / (med * 1e9) if med else None
    k_scale = math.sqrt(k) / 32
    return Result(
        run_id=run_id, problem=f"{m}x{n}x{k}", m=m, n=n, k=k, batch=1, contract=CONTRACT, implementation=impl,
        family=family or impl.split("[")[0].split(".")[0], params=params or {}, status=status, reason=reason,
        is_baseline=is_baseline,
        max_abs_err=errs[0] * k_scale, max_rel_err=errs[0] * k_scale / 10,
        max_abs_err_orig=errs[1] * k_scale, max_rel_err_orig=errs[1] * k_scale / 10, worst_bound_ratio=0.1,
        samples_ms=list(samples), median_ms=med, mean_ms=statistics.fmean(s) if s else None,
        min_ms=s[0] if s else None, max_ms=s[-1] if s else None, stdev_ms=stdev,
        cv=(stdev / statistics.fmean(s)) if stdev else None, iqr_ms=(q3 - q1) if s else None,
        median_ci_rel=(1.96 * 1.2533 * stdev / math.sqrt(len(s)) / med) if stdev else None, n_samples=len(s),
        flops=flops, tflops=tflops,
        pct_of_baseline=(baseline_median / med * 100) if (baseline_median and med) else None,
        baseline=BASELINE, peak_tflops=peak, pct_of_peak=(tflops / peak * 100) if tflops else None,
        unique_bytes=2 * m * k + 2 * k * n + 4 * m * n,
        registers=None if is_baseline else 168, smem_bytes=None if is_baseline else 49152,
        spill_stores=None if is_baseline else 0, spill_loads=None if is_baseline else 0,
        timing={"method": "cuda_events", "l2": "flush"},
    )


def baseline_ms(problem, gpu_scale=1.0) -> float:
    m, n, k = problem
    size = (m * n * k) ** (1 / 3)
    eff = 0.75 * min(1.0, (size / 4096) ** 0.5)  # small problems do not fill the GPU
    return 2 * m * n * k / (989.4e12 * eff * gpu_scale) * 1e3


def make_rows(run_id: str, problems=((1024,) * 3, (2048,) * 3, (4096,) * 3), *, slowdown: dict | None = None,
              statuses: dict | None = None, cv: float = 0.005, n: int = 40, seed: int = 0, gpu_scale=1.0,
              peak=989.4, impls=None, sweep=True) -> list[Result]:
    """Synthetic rows of one run: cuBLAS baseline, a 2x3 mma_sync sweep (smem x stages), one CUTLASS config.
    slowdown: implementation -> factor on its time; statuses: implementation -> Status."""
    slowdown, statuses = slowdown or {}, statuses or {}
    variants = [(BASELINE, {}, 1.0)]
    if sweep:
        for smem in ("padded", "swizzle"):
            for stages in (2, 3, 4):
                eff = 0.80 + 0.05 * stages + (0.04 if smem == "swizzle" else 0)
                variants.append((MMA.format(smem=smem, stages=stages),
                                 {"block": [128, 128, 32], "smem": smem, "stages": stages, "warps": 4}, eff))
    variants.append(("cutlass[config=sm90_tma_coop_128x256x64_c2x1]", {"config": "sm90_tma_coop_128x256x64_c2x1"},
                     0.92))
    if impls is not None:
        variants = [v for v in variants if v[0] in impls]
    rows = []
    for pi, problem in enumerate(problems):
        base = baseline_ms(problem, gpu_scale)
        for vi, (name, params, eff) in enumerate(variants):
            status = statuses.get(name, Status.PASS)
            med = base / eff * slowdown.get(name, 1.0)
            samples = [] if status in (Status.SKIP, Status.BUILD_ERROR, Status.CRASH) else \
                samples_for(med, cv, n, seed * 1000 + pi * 100 + vi)
            rows.append(result_row(run_id, problem, name, samples, params=params, status=status,
                                   is_baseline=name == BASELINE, baseline_median=statistics.median(
                                       samples_for(base * slowdown.get(BASELINE, 1.0), cv, n,
                                                   seed * 1000 + pi * 100)),
                                   peak=peak, reason="" if status == Status.PASS else f"planted {status.value}",
                                   errs=(1e-3, 2e-2) if status == Status.PASS else (5.0, 5.0)))
    return rows


def store_run(store: Store, run_id: str, rows: list[Result], *, gpu="NVIDIA H200", started="2025-01-01T00:00:00",
              commit="abc1234", folder: Path | None = None) -> dict:
    receipt = receipt_for(run_id, gpu, git_commit=commit)
    store.create_run({"run_id": run_id, "name": "synthetic", "spec_path": "experiments/x.yaml", "spec_hash": "deadbeef",
                      "status": "finished", "started_at": started, "finished_at": started, "gpu": gpu, "cc": "9.0",
                      "git_commit": commit, "git_dirty": False, "gemmcompare_version": "0.1.0",
                      "run_dir": str(folder) if folder else None, "receipt": receipt, "spec_text": ""})
    rf = RunFolder(folder) if folder else None
    if rf:
        rf.write_receipt(receipt)
    for r in rows:
        store.add_result(r)
        if rf:
            rf.add(r)
    return receipt


def run_pair(run_id="r1", gpu="NVIDIA H200", **kw) -> tuple[dict, pd.DataFrame]:
    rows = make_rows(run_id, **kw)
    return receipt_for(run_id, gpu), pd.DataFrame([r.to_record() for r in rows])


# -- peaks ------------------------------------------------------------------------------------------------

def test_peaks_by_gpu_and_contract():
    f16 = {"a": "f16", "b": "f16", "c": "f32", "acc": "f32", "math": "strict"}
    assert peak_for("NVIDIA H200", f16) == (989.4, 4.8e12)
    assert peak_for("NVIDIA H100 80GB HBM3", f16) == (989.4, 3.35e12)
    assert peak_for("NVIDIA A100-SXM4-80GB", dict(f16, a="bf16", b="bf16")) == (312.0, 2.039e12)
    assert peak_for("NVIDIA A100-SXM4-80GB", dict(f16, a="f32", b="f32", math="tf32"))[0] == 156.0
    assert peak_for("NVIDIA H200", dict(f16, a="f32", b="f32"))[0] == 67.0  # strict f32: SIMT
    assert peak_for("NVIDIA GeForce RTX 4090", f16)[0] == 165.2  # GeForce halves f32-accumulate tensor math
    assert peak_for("NVIDIA GeForce RTX 4090", dict(f16, acc="f16", c="f16"))[0] == 330.3
    assert device_peaks("NVIDIA A100-SXM4-40GB").bandwidth == 1.555e12
    assert device_peaks("NVIDIA H100 PCIe").name == "H100 PCIe"
    assert peak_for("Some Unknown GPU", f16) is None
    from gemmcompare.contracts.precision import BUILTIN_CONTRACTS
    assert compute_class(BUILTIN_CONTRACTS["f32_tf32_tn"]) == "tf32_tensor"
    assert compute_class(BUILTIN_CONTRACTS["f32_strict_tn"]) == "f32_simt"
    assert compute_class(BUILTIN_CONTRACTS["bf16_f32acc_nn"].as_dict()) == "f16_tensor"


# -- names and tables -------------------------------------------------------------------------------------

def test_legend_labels_drop_shared_params_keep_identity_and_stay_unique():
    names = [MMA.format(smem=s, stages=t) for s in ("padded", "swizzle") for t in (2, 3)] + [BASELINE]
    short = legend_labels(names)
    # warps=4 is shared by all, but identity parameters (block, stages, warps) always stay; smem tells them apart
    assert short[MMA.format(smem="padded", stages=2)] == "mma_sync[block=128x128x32,smem=padded,stages=2,warps=4]"
    assert short[BASELINE] == BASELINE
    assert len(set(short.values())) == len(names)
    assert split_name("cutlass[config=a_b,tile=[1,2]]") == ("cutlass", [("config", "a_b"), ("tile", "[1,2]")])
    # alone of its head: only its identity parameters
    alone = "mma_sync[acc=f32,block=256x128x64,epilogue=plain,group=8,layout=tn,stages=3,warp_tile=64x64,warps=8]"
    assert legend_labels([alone, BASELINE])[alone] == "mma_sync[block=256x128x64,stages=3,warp_tile=64x64,warps=8]"


def test_labels_are_never_cut_and_wrap_between_tokens():
    long = "mma_sync[acc=f32,block=256x128x64,epilogue=plain,group=8,layout=tn,mma=m16n8k16,smem=swizzle,stages={},warp_tile=64x32,warps=16]"
    other = "mma_sync[acc=f32,block=128x256x64,epilogue=plain,group=8,layout=tn,mma=m16n8k16,smem=swizzle,stages=3,warp_tile=64x64,warps=8]"
    short = legend_labels([long.format(3), long.format(4), other])
    assert short[long.format(3)] == "mma_sync[block=256x128x64,stages=3,warp_tile=64x32,warps=16]"
    assert "…" not in "".join(short.values())
    wrapped = wrap(short[long.format(3)], width=30)
    assert wrapped.replace("\n", "") == short[long.format(3)]  # nothing lost
    assert all(len(line) <= 30 for line in wrapped.split("\n")) and "warp_\n" not in wrapped


def test_summary_table_full_precision_and_display(tmp_path):
    receipt, df = run_pair()
    summary = summary_table(normalise_rows(df))
    assert summary["implementation"].iloc[0] == BASELINE  # baseline first in each problem
    assert summary["problem"].iloc[0] == "1024x1024x1024"
    disp = display_table(summary[summary["problem"] == "4096x4096x4096"])
    assert "% of baseline" in disp.columns and "max rel err (orig)" in disp.columns
    assert disp["implementation"].iloc[0].endswith("(baseline)")
    md = markdown_table(disp)
    assert md.count("\n") == len(disp) + 1
    # the CSV keeps every digit; the display rounds
    summary.to_csv(tmp_path / "s.csv", index=False, float_format="%.17g")
    back = pd.read_csv(tmp_path / "s.csv", **exact_floats())
    assert back["median_ms"].tolist() == summary["median_ms"].tolist()


# -- the report ------------------------------------------------------------------------------------------------

def _check_pngs(report):
    for plot in report.plots:
        if not plot.skipped:
            assert plot.png.exists() and plot.png.stat().st_size > 5000
            assert plot.svg.exists() and plot.svg.read_text().lstrip().startswith("<?xml")


def test_report_writes_md_csv_html_and_plots(tmp_path):
    store = Store(tmp_path / "g.db")
    rows = make_rows("run-a", problems=[(s, s, s) for s in (512, 1024, 2048, 4096, 8192)],
                     statuses={MMA.format(smem="padded", stages=2): Status.FAIL})
    store_run(store, "run-a", rows)
    run = store.find_run("run-a")
    report = build_report((run["receipt"], store.results("run-a")), tmp_path / "report")
    for name in ("report.md", "report.html", "summary.csv"):
        assert (tmp_path / "report" / name).exists()
    drawn = {p.kind for p in report.plots if not p.skipped}
    assert drawn == {"throughput_vs_size", "percent_of_baseline", "roofline", "bandwidth", "error_vs_k", "heatmap",
                     "distribution"}  # 512^3 is memory-bound on an H200
    assert [p.kind for p in report.plots if p.skipped] == ["architectures", "energy_vs_speed"]  # no energy figures
    _check_pngs(report)
    page = (tmp_path / "report" / "report.html").read_text()
    assert "data:image/png;base64," in page and "NVIDIA H200" in page and "cuda_events" in page
    assert "|C-R| &lt;= atol" in page and CONTRACT in page  # tolerance formula and contracts in the receipt
    assert "<img" in page and "src='report" not in page  # embedded, not linked
    md = (tmp_path / "report" / "report.md").read_text()
    assert "planted FAIL" in md and "(baseline)" in md
    csv = pd.read_csv(tmp_path / "report" / "summary.csv")
    assert len(csv) == len(rows)


def test_plots_skip_cleanly_with_too_little_data(tmp_path):
    receipt, df = run_pair(problems=[(4096, 4096, 4096)], sweep=False, impls=[BASELINE])
    receipt["gpu"] = "Mystery GPU 9000"
    df["peak_tflops"] = None
    report = build_report((receipt, df), tmp_path / "r")
    skipped = {p.kind: p.skipped for p in report.plots if p.skipped}
    assert skipped["throughput_vs_size"] == "one problem size only"
    assert skipped["error_vs_k"] == "one K only"
    assert "no passing non-baseline row" in skipped["percent_of_baseline"]
    assert "no datasheet peaks for 'Mystery GPU 9000'" in skipped["roofline"]
    assert "no HBM bandwidth for 'Mystery GPU 9000'" in skipped["bandwidth"]
    assert "heatmap" in skipped and "architectures" in skipped
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Not drawn:" in html and "one problem size only" in html
    assert "not drawn" in report.text_summary()


def test_empty_run_reports_without_plots(tmp_path):
    report = build_report(({}, pd.DataFrame()), tmp_path / "r")
    assert report.plots == [] and (tmp_path / "r" / "report.html").exists()


def test_report_spanning_two_gpus_draws_architectures(tmp_path):
    problems = [(s, s, s) for s in (1024, 2048, 4096)]
    a = run_pair("h200-run", "NVIDIA H200", problems=problems, sweep=False)
    b = run_pair("a100-run", "NVIDIA A100-SXM4-80GB", problems=problems, sweep=False, gpu_scale=312 / 989.4,
                 peak=312.0)
    report = build_report([a, b], tmp_path / "r", plots=["architectures", "roofline", "throughput_vs_size"])
    arch = [p for p in report.plots if p.kind == "architectures"]
    assert len(arch) == 1 and not arch[0].skipped
    assert len([p for p in report.plots if p.kind == "roofline" and not p.skipped]) == 2  # one per GPU
    assert "several GPUs" in next(p.skipped for p in report.plots if p.kind == "throughput_vs_size")
    _check_pngs(report)


def test_unknown_plot_kind_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="unknown plot kind"):
        build_report(run_pair(), tmp_path / "r", plots=["pie_chart"])
    from gemmcompare.spec import PLOTS
    assert set(PLOT_KINDS) == set(PLOTS)  # the names a spec's `report: {plots: [...]}` may use


def test_report_from_run_folder_and_csv(tmp_path):
    store = Store(tmp_path / "g.db")
    store_run(store, "run-f", make_rows("run-f"), folder=tmp_path / "runs" / "run-f")
    for source in (tmp_path / "runs" / "run-f", tmp_path / "runs" / "run-f" / "results.csv"):
        receipt, df = load_result_file(source)
        report = build_report((receipt, df), tmp_path / "out" / source.name, plots=["throughput_vs_size"])
        assert len(report.summary) == len(df) and report.summary["is_baseline"].sum() == 3


def test_build_report_from_a_run_id_and_store_path(tmp_path):
    # the runner's call at the end of `gemmcompare run`
    db = tmp_path / "g.db"
    store_run(Store(db), "20250101-zz", make_rows("20250101-zz"))
    report = build_report("20250101-zz", store=str(db), out_dir=tmp_path / "rep", plots=["roofline"])
    assert str(report) == str(tmp_path / "rep" / "report.html")
    assert report.summary["run_id"].unique().tolist() == ["20250101-zz"]


COMMITTED = Path(__file__).resolve().parents[1] / "experiments" / "studies" / "quickstart" / "h200"


@pytest.mark.skipif(not COMMITTED.exists(), reason="no committed quickstart receipt")
def test_report_of_the_committed_h200_quickstart(tmp_path):
    receipt, df = load_result_file(COMMITTED)
    report = build_report((receipt, df), tmp_path / "qs", plots=list(PLOT_KINDS))  # every kind, not the spec's two
    assert {"throughput_vs_size", "roofline", "error_vs_k", "percent_of_baseline"} <= {
        p.kind for p in report.plots if not p.skipped}
    page = (tmp_path / "qs" / "report.html").read_text()
    assert "tolerance" in page.lower() and "f32_strict_tn" in page and "library.cublas (baseline)" in page


# -- CLI ----------------------------------------------------------------------------------------------------

def cli(argv):
    import argparse

    from gemmcompare.cli import report
    parser = argparse.ArgumentParser(prog="gemmcompare")
    report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([str(a) for a in argv])
    return args.func(args)


def test_cli_report_from_store_and_errors(tmp_path, capsys):
    db = tmp_path / "g.db"
    store = Store(db)
    store_run(store, "20250101-aaaa", make_rows("20250101-aaaa"))
    assert cli(["report", "latest", "--store", db, "--out", tmp_path / "rep"]) == 0
    out = capsys.readouterr().out
    assert "report.html" in out and (tmp_path / "rep" / "report.html").exists()
    assert cli(["report", "nope", "--store", db]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err
    assert cli(["report", tmp_path / "missing.json", "--store", tmp_path / "none.db"]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and not (tmp_path / "none.db").exists()  # no store created as a side effect


def test_procedural_labels_keep_tile_cluster_schedule_stages():
    sm90 = "cutlass.cutlass3x_sm90_tensorop_f16_f32_f32_128x256x64_{}_coop_epitma_stauto_persistent_tn_align8_{}"
    names = [sm90.format("2x1x1", "rasterH_swz1"), sm90.format("1x1x1", "rasterN_swz8"),
             "cutlass.cute_sm80_f16_f32_f32_128x256x32_w2x4_mma16x8x16_4st_tn_swz8",
             "cutlass.cute_sm80_f16_f32_f32_128x128x32_w2x2_mma16x8x16_3st_tn_swz8",
             "cutlass.cutlass2x_sm80_tensorop_f16_f32_f32_128x256x32_64x64x32_16x8x16_3st_swz8_tn_align8", BASELINE]
    short = legend_labels(names)
    assert short[names[0]] == "cutlass3x_sm90 128x256x64 cluster 2x1x1 coop stauto rasterH swz1"
    assert short[names[1]] == "cutlass3x_sm90 128x256x64 cluster 1x1x1 coop stauto rasterN swz8"
    assert short[names[2]] == "cute_sm80 128x256x32 w2x4 4st"
    assert short[names[3]] == "cute_sm80 128x128x32 w2x2 3st"
    # alone of its kind: every token but the ones the contract fixes (types, layout, alignment)
    assert short[names[4]] == "cutlass2x_sm80 128x256x32 64x64x32 16x8x16 3st swz8"
    assert short[BASELINE] == BASELINE and len(set(short.values())) == len(names)


def test_every_family_a_row_can_have_is_one_of_the_reports_kinds():
    """A family missing from the kinds is drawn grey and left out of the legend (hopper.best was). A row's
    family is its implementation's name up to the first dot ('cute' makes rows of family 'cutlass')."""
    from gemmcompare.implementations.registry import all_names
    from gemmcompare.report.data import KINDS, kind_of

    families = {name.split(".")[0] for name in all_names()} - {"cute"}
    assert {"hopper", "lab", "mma_sync", "library", "cutlass", "python", "custom"} <= families
    for family in families:
        assert kind_of(family) in KINDS, family
    # a tuned row's family is the tuned entry's whole name (hopper.best.tuned: 'hopper.best'), once drawn grey
    # and shown as a kind of its own in the summary
    for name in all_names():
        if not name.startswith("cute"):
            assert kind_of(name) in KINDS, name
    assert kind_of("hopper.grouped") == kind_of("hopper.best") == "hand-written"


def test_report_draws_the_plots_the_runs_spec_names(tmp_path):
    """The committed quickstart ran a spec that asks for two plot kinds (its receipt names the spec and its
    hash, and the file is unchanged): `report` draws those two, as the run did, not every kind; a receipt that
    records report_plots is read first; --plots still chooses."""
    from gemmcompare.report.build import spec_plots
    from gemmcompare.spec import load_spec

    receipt, rows = load_result_file(COMMITTED)
    asked = list(load_spec(Path(__file__).resolve().parents[1] / "experiments" / "quickstart.yaml").report.plots)
    assert asked == ["throughput_vs_size", "percent_of_baseline"]
    report = build_report((receipt, rows), tmp_path / "r")
    assert sorted(p.kind for p in report.plots) == sorted(asked * 2)  # two contracts each
    assert spec_plots([dict(receipt, report_plots=["roofline"])]) == ["roofline"]
    assert spec_plots([dict(receipt, spec_hash="another")]) is None  # the spec changed since: every kind
    assert spec_plots([dict(receipt, report_plots=["roofline"]), dict(receipt, report_plots=["errors_vs_k"])]) is None


def test_a_run_that_measured_energy_gets_its_energy_plot_beside_the_specs_plots(tmp_path):
    """`gemmcompare run --energy` on a spec that names its plots without energy_vs_speed (the FP8 and LLM-shapes
    studies did): the report draws the spec's plots and the energy one; a run without energy figures does not get
    it, and --plots still chooses alone."""
    from gemmcompare.report.build import with_energy_plot

    receipt, rows = load_result_file(COMMITTED)
    asked = ["throughput_vs_size", "percent_of_baseline"]
    assert with_energy_plot(asked, [(receipt, rows)]) == asked  # no energy measured
    measured = rows.copy()
    measured["energy_j_per_gemm"] = [0.1 if s == "PASS" else None for s in measured["status"]]
    measured["energy_ci_rel"] = 0.01
    assert with_energy_plot(asked, [(receipt, measured)]) == [*asked, "energy_vs_speed"]
    assert with_energy_plot(None, [(receipt, measured)]) is None  # every kind already
    report = build_report((dict(receipt, report_plots=asked), measured), tmp_path / "r")
    assert "energy_vs_speed" in {p.kind for p in report.plots}
    report = build_report((dict(receipt, report_plots=asked), measured), tmp_path / "s", plots=["roofline"])
    assert {p.kind for p in report.plots} == {"roofline"}
