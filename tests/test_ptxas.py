"""The ptxas report parser on recorded nvcc 13.0 output (no compiler needed)."""

from __future__ import annotations

from gemmcompare.build.ptxas import parse_ptxas, summarize_for

KERNEL = "_ZN7cutlass13device_kernelI4GemmEEvNT_6ParamsE"
OTHER = "_Z12other_kernelv"

# Shortened from a CUTLASS SM90 kernel TU compiled without -DNDEBUG (the wgmma pipeline serialized);
# ptxas prints the note before any entry's report, naming its function.
LOG = f"""\
ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to wgmma pipeline crossing function boundary at a function call in the function '{KERNEL}'
ptxas info    : 40 bytes gmem
ptxas info    : Compiling entry function '{OTHER}' for 'sm_90a'
ptxas info    : Function properties for {OTHER}
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers
ptxas info    : Compiling entry function '{KERNEL}' for 'sm_90a'
ptxas info    : Function properties for {KERNEL}
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers
"""


def test_performance_loss_notes_go_to_the_kernel_they_name():
    kernels = {k["function"]: k for k in parse_ptxas(LOG)}
    assert kernels[KERNEL]["perf_warnings"] == [
        "C7510: wgmma.mma_async instructions are serialized due to wgmma pipeline crossing function boundary "
        "at a function call"
    ]
    assert kernels[KERNEL]["registers"] == 168 and kernels[KERNEL]["stack_bytes"] == 8
    assert kernels[OTHER]["perf_warnings"] == []


def test_summary_carries_the_notes_of_the_matching_kernels_only():
    resources = parse_ptxas(LOG)
    assert summarize_for(resources, "device_kernel")["perf_warnings"][0].startswith("C7510: wgmma")
    assert summarize_for(resources, "other_kernel")["perf_warnings"] == []


def test_a_note_without_a_function_name_belongs_to_the_next_entry():
    note = LOG.splitlines()[0].replace(f" in the function '{KERNEL}'", "")
    log = LOG.replace(LOG.splitlines()[0] + "\n", "").replace(
        f"ptxas info    : Compiling entry function '{KERNEL}'", note + f"\nptxas info    : Compiling entry function '{KERNEL}'")
    kernels = {k["function"]: k for k in parse_ptxas(log)}
    assert len(kernels[KERNEL]["perf_warnings"]) == 1 and not kernels[OTHER]["perf_warnings"]


def test_the_real_report_of_a_kernel_built_without_ndebug():
    """ptxas's own output for the SM90 kernel TU without -DNDEBUG, as the JIT build log holds it."""
    real = (f"ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
            f"to wgmma pipeline crossing function boundary at a function call in the function '{KERNEL}'\n"
            f"ptxas info    : 4103 bytes gmem\nptxas info    : Compiling entry function '{KERNEL}' for 'sm_90a'\n"
            f"ptxas info    : Function properties for {KERNEL}\n"
            f"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
            f"ptxas info    : Used 168 registers, used 2 barriers\nptxas info    : Compile time = 141.348 ms\n")
    (kernel,) = parse_ptxas(real)
    assert kernel["registers"] == 168 and kernel["perf_warnings"][0].startswith("C7510: wgmma.mma_async")


def test_gemmcompare_build_prints_the_notes_of_each_implementations_kernels(monkeypatch, capsys, tmp_path):
    """`gemmcompare build SPEC` shows a kernel's performance-loss note under its `ok` line (the build
    itself is stubbed: the notes come from the resources a real build parses)."""
    from types import SimpleNamespace

    from gemmcompare import cli
    from gemmcompare.build import experiment
    from gemmcompare.build.experiment import ExperimentBuilds
    from gemmcompare.build.extension import LoadedExtension

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: notes\nproblems: [{m: 256, n: 256, k: 256}]\ncontracts: [f16_f32acc_tn]\n"
                    "implementations:\n  - cutlass: {config: sm90_coop_128x256x64_c1x1}\n")
    plan = SimpleNamespace(arch="sm_90a", module_name="gc_cutlass_test")

    def fake_build(exp, device, **options):
        (impl,) = exp.implementations
        ext = LoadedExtension(None, plan, parse_ptxas(LOG.replace(KERNEL, "_ZN7cutlass13device_kernelI"
                                                                       "N4gemm6kernel13GemmUniversalEEEvv")),
                              12.0, False, tmp_path)
        return ExperimentBuilds(by_impl={impl.name: ext}, target_cc=90)

    monkeypatch.setattr(experiment, "build_experiment", fake_build)  # what `build` calls
    assert cli.main(["build", str(spec), "--arch", "sm_90a", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "ok          cutlass.cutlass3x_sm90" in out
    assert "ptxas performance loss: C7510: wgmma.mma_async instructions are serialized" in out
