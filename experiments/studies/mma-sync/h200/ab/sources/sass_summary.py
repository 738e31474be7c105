"""Dump SASS of every built extension in the cache; print an opcode histogram per kernel."""
import collections, os, re, subprocess, sys, pathlib
cache = pathlib.Path(os.environ["GEMMCOMPARE_CACHE_DIR"])
out = pathlib.Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
tool = "cuobjdump"
for cand in ("/usr/local/cuda/bin/cuobjdump",):
    if os.path.exists(cand): tool = cand
for so in sorted(cache.rglob("*.so")):
    if "cutlass" in str(so): continue
    try:
        text = subprocess.run([tool, "-sass", str(so)], capture_output=True, text=True, timeout=120).stdout
    except Exception as e:
        print("cuobjdump failed", so, e); continue
    (out / (so.parent.name + "_" + so.stem + ".sass")).write_text(text)
    for block in text.split("Function : ")[1:]:
        name = block.split("\n", 1)[0].strip()
        if "gemm_kernel" not in name: continue
        ops = collections.Counter()
        for line in block.splitlines():
            m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?", line)
            if m: ops[m.group(1)] += 1
        top = " ".join(f"{k}:{v}" for k, v in ops.most_common(18))
        print(f"{so.stem[:40]} {name[:160]}\n    total {sum(ops.values())} {top}")
