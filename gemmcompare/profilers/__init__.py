"""NVIDIA's tools over a spec's rows: compute-sanitizer (sanitizer), Nsight Compute (ncu, with the process it
profiles in driver), and finding the tools (tools)."""
