"""Seconds to compile a representative few of the LLM-shapes study's kernel TUs, one at a time, exactly as the
JIT build compiles them (toolchain.compile_object: the kernel flags, no torch binding), into a scratch folder.

    PYTHONPATH=. python3 experiments/studies/llm-shapes/llm_shapes_tu_seconds.py experiments/llm_shapes.yaml

Prints one line per TU: wall seconds, CPU seconds (nvcc and its children, user + system: what a free core
would take, whatever else this machine runs), kernels in ptxas's report, which candidate and TU. The hopper TUs are also
compiled once more with one input/output type pair (bf16 -> bf16 through the steps' run_typed entry, no
occupancy entry), a scratch copy only: how much of a hopper TU its six type pairs cost.
"""

from __future__ import annotations

import re
import resource
import sys
import tempfile
import time
from pathlib import Path

from gemmcompare.build import toolchain
from gemmcompare.spec import load_spec

# (tuned row's family, a substring of the candidate's name, which of its TUs: substrings, or None for all)
PICKS = [
    ("cutlass", "sm90_tensorop_bf16_bf16_f32_64x64x64_1x1x1_pp", None),
    ("cutlass", "sm80_tensorop_bf16_bf16_f32_64x64x64", None),
    ("cutlass", "streamk_tn_align8_rasterH_swz1_splitk2", None),  # the stream-K kernel TU and one entry TU
    ("hopper.best", "block=64x128x64,cluster_m=2,consumers=1", None),
    ("hopper.split_k", "block=64x128x64,cluster_m=1,consumers=1,group=8,splits=0,stages=6", None),
    ("mma_sync", "block=64x64x64,epilogue=plain,group=8,layout=both,mma=m16n8k16,smem=swizzle,stages=4",
     ("_tn_bf16_bf16out.cu", "_entry.cu")),
    ("decode", "cols=16,splits=1,unroll=1", ("_bf16_bf16.cu", "_entry.cu")),
]


def one_pair(text: str) -> str:
    """A hopper instantiation TU cut down to bf16 -> bf16: run_typed instead of run, no occupancy entry."""
    text = re.sub(r"::run<(\w+)_config, (\w+)_tag>", r"::run_typed<\1_config, __nv_bfloat16, __nv_bfloat16, \2_tag>",
                  text)
    return re.sub(r'extern "C" int \w+_occupancy\(.*?\n}\n', "", text, flags=re.S)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_one(src_name: str, text: str, req, scratch: Path) -> tuple[float, float, int, str]:
    path = scratch / src_name
    path.write_text(text)
    t0, cpu0 = time.time(), _children_cpu_s()
    proc = toolchain.compile_object(path, req.arch, path.with_suffix(".o"), extra_flags=tuple(req.cuda_flags),
                                    include_dirs=tuple(req.include_dirs), uses_cutlass=req.uses_cutlass)
    seconds, cpu = time.time() - t0, _children_cpu_s() - cpu0
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return seconds, cpu, -1, log[-1500:]
    return seconds, cpu, len(re.findall(r"Compiling entry function", log)), ""


def main(spec_path: str) -> None:
    toolchain.ensure_cuda_home()
    exp = load_spec(spec_path)
    by_family = {impl.family: impl for impl in exp.implementations}
    with tempfile.TemporaryDirectory(prefix="tu-seconds-") as tmp:
        scratch = Path(tmp)
        for family, name_part, which in PICKS:
            cand = next(c for c in by_family[family].candidates if name_part in c.name)
            req = cand.build_request(cand.target_arch(90))
            for src in req.sources:
                if not src.filename.endswith(".cu") or (which and not any(w in src.filename for w in which)):
                    continue
                variants = [("", src.read())]
                if family.startswith("hopper."):
                    variants.append((" (bf16->bf16 only)", one_pair(src.read())))
                for label, text in variants:
                    seconds, cpu, kernels, error = compile_one(("one_pair_" if label else "") + src.filename, text, req,
                                                          scratch)
                    print(f"{seconds:7.1f} s wall {cpu:7.1f} s CPU  {kernels:3d} kernels  {family}: {cand.name[-60:]}  {src.filename}{label}"
                          + (f"\n  FAILED: {error}" if error else ""), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
