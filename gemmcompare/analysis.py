"""Everything that can be known about a spec before running it: `gemmcompare analyze`.

spec -> plan -> each implementation's kernel TUs compiled alone for the device's architecture (ptxas's
registers and shared memory: the occupancy model's inputs; build/kernel_objects.py, cached) -> one row
per (problem, contract, implementation) with the model's prediction for the named or detected device
(gemmcompare.model) -> a report: tables, the predictions section and rooflines with the predicted points.

Rows are Result records with status PREDICTED (the model could describe the kernel), SKIP (the plan or
the device rules it out, with the reason), BUILD_ERROR (its TUs do not compile) or NO_MODEL (it compiles,
but the model cannot describe it: the reason is kept). No GPU is needed; on a machine with one, its
reported properties override the device table's. A tuned row (docs/tuning.md) is analyzed as its candidates:
the model predicts each; the race that picks among them needs the GPU.
"""

from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .device import DeviceInfo
from .errors import GemmCompareError
from .files import atomic_write_text, write_csv
from .model.devices import DEVICES, DeviceSpec, device_spec
from .model.predict import predict_row
from .progress import SILENT, Progress
from .results import COLUMNS, Status

# The names `--device` takes, beside the table's own keys and product names ('NVIDIA H200').
DEVICE_ALIASES = {"h100": "h100_sxm", "h200": "h200_sxm", "a100": "a100_sxm_80gb", "l4": "l4", "rtx4090": "rtx_4090",
                  "4090": "rtx_4090", "b200": "b200"}
PREDICTED, NO_MODEL = "PREDICTED", "NO_MODEL"


class UnknownDevice(GemmCompareError):
    exit_code = 2


def resolve_device(name: str | None) -> DeviceSpec:
    """The model's device: a named one (an alias, a table key or a product name), else the detected GPU
    (the table's entry overridden by what it reports). Raises UnknownDevice (exit 2) with the choices."""
    choices = ", ".join(DEVICE_ALIASES)
    if name:
        spec = DEVICES.get(DEVICE_ALIASES.get(name.strip().lower(), "")) or device_spec(name)
        if spec is None:
            raise UnknownDevice(f"--device {name!r} is not in the device table; choose one of {choices}")
        return spec
    from .device import probe_device
    from .model.devices import device_from_properties

    live = probe_device()
    if live is None:
        raise UnknownDevice(f"no CUDA device here to detect: name one with --device ({choices})")
    spec = device_from_properties(live)
    if not spec.peak_tflops:
        raise UnknownDevice(f"the detected {live.name} is not in the device table (no peak rates): name a device "
                            f"with --device ({choices})")
    return spec


def device_info(spec: DeviceSpec) -> DeviceInfo:
    """What the implementations' device checks read (name, compute capability, SMs, L2, memory)."""
    return DeviceInfo(spec.name, tuple(spec.compute_capability), spec.sm_count, spec.l2_bytes, spec.memory_bytes)


@dataclass
class Analysis:
    device: DeviceSpec
    rows: list[dict[str, Any]]  # Result records, status one of PREDICTED, SKIP, BUILD_ERROR, NO_MODEL
    compile_notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out


def analyze(exp, device: DeviceSpec, *, cache_dir: Path | None = None, jobs: int | None = None,
            progress: Progress = SILENT) -> Analysis:
    """Compile what the plan needs for `device` and predict every row (see the module docstring); `progress`
    hears of the plan, each compile as it finishes (a cold cache takes minutes) and the predictions."""
    from .build.kernel_objects import CompileFailure
    from .plan import make_plan
    from .runner.predictions import apply_prediction
    from .runner.rows import base_row, copy_build_resources

    from .tuning.tuned import with_candidates

    info = device_info(device)
    with progress.step("planning") as step:
        exp = dataclasses.replace(exp, implementations=tuple(with_candidates(exp.implementations)))
        plan = make_plan(exp)
        # each cell's support on this device, once (the plan knows the problem-and-contract half already)
        supports = [c.implementation.check(c.entry.problem, c.contract, info) if c.support else c.support
                    for c in plan.cells]
        wanted = {}
        for cell, support in zip(plan.cells, supports):
            impl = cell.implementation
            if support and impl.name not in wanted:
                req = impl.build_request(impl.target_arch(info.cc_int))
                wanted[impl.name] = (impl, req)
        reqs = [r for _, r in wanted.values() if r is not None]
        step.done = (f"planned {len(plan.cells)} rows; {len(reqs)} implementation(s) to compile for "
                     f"{', '.join(sorted({r.arch for r in reqs})) or device.arch}")
    names = {id(req): impl.name for impl, req in wanted.values() if req is not None}
    compiled = _compile(reqs, names, cache_dir, jobs, progress)
    notes = []
    rows = []
    with progress.step("predicting") as step:
        for cell, support in zip(plan.cells, supports):
            impl, entry, contract = cell.implementation, cell.entry, cell.contract
            row = base_row("analysis", exp, entry, contract, impl.name, impl.family, impl.params)
            status = Status.SKIP.value
            if not support:
                row.reason = support.reason
            else:
                _, req = wanted[impl.name]
                built = compiled.get(id(req)) if req is not None else None
                if isinstance(built, CompileFailure):
                    status, row.reason = Status.BUILD_ERROR.value, built.message
                else:
                    if built is not None:
                        copy_build_resources(row, built.resources_for(impl.kernel_filter_for(contract)), impl)
                        row.arch = req.arch
                    try:
                        apply_prediction(row, predict_row(row, device))
                        status = PREDICTED
                    except (KeyError, ValueError) as exc:
                        status, row.reason = NO_MODEL, str(exc).strip("'\"")
            rec = row.to_record()
            rec["status"] = status
            rows.append(rec)
        step.done = "predicted " + ", ".join(f"{v} {k}" for k, v in sorted(Analysis(device, rows).counts().items()))
    for impl, req in wanted.values():
        built = compiled.get(id(req)) if req is not None else None
        if built is not None and not isinstance(built, CompileFailure):
            how = "cached" if built.cached else f"compiled in {built.seconds:.1f} s"
            notes.append(f"{impl.name}: {req.arch}, {how}")
    return Analysis(device, rows, notes)


def _compile(reqs: list, names: dict[int, str], cache_dir: Path | None, jobs: int | None, progress: Progress) -> dict:
    """id(request) -> its KernelObjects or CompileFailure, each said as it finishes."""
    from .build.kernel_objects import CompileFailure, compile_requests

    if not reqs:
        return {}
    with progress.step("compiling") as step, progress.items(len(reqs), "compiling", unit="impl") as items:
        def said(built) -> None:
            name = names[id(built.request)]
            if isinstance(built, CompileFailure):
                items.done(f"{name}: BUILD_ERROR (its row says why)", built.seconds)
            elif not built.objects:
                items.done(f"{name}: no kernel source of its own to compile (a library's)")
            elif built.cached:
                items.done(f"{name}: {built.request.arch}, cached")
            else:
                items.done(f"{name}: compiled for {built.request.arch}", built.seconds)

        results = compile_requests(reqs, cache_dir, jobs, on_done=said)
        kinds = ["failed" if isinstance(r, CompileFailure) else "nothing to compile" if not r.objects
                 else "cached" if r.cached else "compiled" for r in results]
        step.done = f"kernels of {len(reqs)} implementation(s): " + ", ".join(
            f"{kinds.count(k)} {k}" for k in ("compiled", "cached", "nothing to compile", "failed") if k in kinds)
    return dict(zip((id(r) for r in reqs), results))


# -- the report --------------------------------------------------------------------------------------------

RESOURCE_COLUMNS = ["implementation", "status", "registers", "smem_bytes", "spill_stores", "spill_loads", "arch"]


def receipt(exp, device: DeviceSpec) -> dict[str, Any]:
    from . import __version__
    from .build import toolchain
    from .receipt import git_state

    try:
        nvcc = toolchain.nvcc_version()
    except Exception:  # noqa: BLE001 - no toolkit: recorded as such
        nvcc = None
    return {"spec": exp.path, "spec_name": exp.name, "spec_hash": exp.spec_hash, "device": device.key,
            "device_name": device.name, "device_sources": dict(device.sources), "overridden": list(device.overridden),
            "nvcc": nvcc, "cutlass": toolchain.cutlass_version(), "gemmcompare": __version__, **git_state()}


def write_report(analysis: Analysis, exp, out_dir: str | Path, progress: Progress = SILENT) -> Path:
    """analysis.md, analysis.html, rows.csv (every row, full precision), predictions.csv and the rooflines
    (`progress` hears of each roofline)."""
    from .report.html import page
    from .report.predictions import predictions_section
    from .report.writers import html_table, markdown_table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(analysis.rows, columns=COLUMNS)
    write_csv(df, out / "rows.csv")
    from .report.data import normalise_rows

    rows = normalise_rows(df)
    section = predictions_section(rows, out, progress=progress)
    dev = analysis.device
    title = f"gemmcompare analyze: {exp.name} on {dev.name} (predicted, not measured)"
    counts = ", ".join(f"{v} {k}" for k, v in sorted(analysis.counts().items()))
    intro = (f"{len(analysis.rows)} rows: {counts}. Nothing here was measured: every time is the model's, for "
             f"{dev.name} ({dev.key}; sources below), from ptxas's registers and shared memory of each kernel "
             f"compiled for {dev.arch}. Run `gemmcompare run {exp.path}` on the GPU to put measurements beside them.")
    other = rows[rows["status"] != PREDICTED]
    other_display = pd.DataFrame({"problem": other["problem"], "contract": other["contract"],
                                  "implementation": other["implementation"], "status": other["status"],
                                  "reason": [r[:160] for r in other["reason"]]})
    res = rows[rows["status"] == PREDICTED].drop_duplicates("implementation")
    res_display = pd.DataFrame({c: ["" if v is None or (isinstance(v, float) and v != v) else
                                    (f"{int(v)}" if isinstance(v, float) else str(v)) for v in res[c]]
                                for c in RESOURCE_COLUMNS})
    rec = receipt(exp, dev)
    md = [f"# {title}\n", intro + "\n", section.markdown,
          "## Resources (ptxas, per implementation)\n", markdown_table(res_display) + "\n"]
    body = [f"<p>{html.escape(intro)}</p>", section.html, "<h2>Resources (ptxas, per implementation)</h2>",
            html_table(res_display)]
    if len(other):
        md += ["## Rows without a prediction\n", markdown_table(other_display) + "\n"]
        body += ["<h2>Rows without a prediction</h2>", html_table(other_display)]
    md += ["## Receipt\n", "```json\n" + json.dumps(rec, indent=1, default=str) + "\n```\n"]
    body += ["<h2>Receipt</h2>", f"<pre>{html.escape(json.dumps(rec, indent=1, default=str))}</pre>"]
    atomic_write_text(out / "analysis.md", "\n".join(md))
    atomic_write_text(out / "analysis.html", page(title, "\n".join(body)))
    atomic_write_text(out / "receipt.json", json.dumps(rec, indent=2, default=str))
    return out / "analysis.md"
