"""Which FP8 GEMM shapes the installed torch/cuBLASLt accepts, per scaling (tensor, row/column, 1x128 x 128x128
blocks): the rule library.cublaslt_fp8_loop must meet for a grouped problem's small groups. Prints one line per
(scaling, M, N, K): ok, or the error's first line; then whether a scale pointer 4, 8 or 16 bytes into its allocation
is taken. On the GPU: python3 experiments/studies/fp8/cublaslt_fp8_shape_probe.py
"""

import itertools

import torch

F = torch.nn.functional
E4M3 = torch.float8_e4m3fn


def call(scaling, m, n, k, scale_offset=0):
    a = torch.randn(m, k, device="cuda").to(E4M3)
    b = torch.randn(n, k, device="cuda").to(E4M3).t()  # k x n column-major
    if scaling == "block":
        kb = -(-k // 128)
        sa = torch.ones(kb, m, device="cuda").t()  # m x kb, outer-dim-major
        sb = torch.ones(-(-n // 128), kb, device="cuda").t()  # kb x nb, outer-dim-major
        return F.scaled_mm(a, b, sa, F.ScalingType.BlockWise1x128, sb, F.ScalingType.BlockWise128x128,
                           output_dtype=torch.bfloat16)
    if scaling == "rowcol":
        sa, sb = torch.ones(m + scale_offset, 1, device="cuda")[scale_offset:], torch.ones(1, n, device="cuda")
    else:  # scale_offset: a view scale_offset floats into its allocation (a group's slice of stacked scales)
        sa, sb = torch.ones(1 + scale_offset, device="cuda")[scale_offset].reshape(()), torch.ones((), device="cuda")
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def main():
    print("torch", torch.__version__, "cuBLAS", torch.backends.cuda.preferred_blas_library(), torch.version.cuda)
    for scaling, m, (n, k) in itertools.product(("tensor", "rowcol", "block"), (1, 4, 5, 8, 16, 64, 130, 256),
                                                ((256, 512), (512, 1024), (384, 512), (1024, 1024))):
        try:
            call(scaling, m, n, k)
            torch.cuda.synchronize()
            verdict = "ok"
        except Exception as exc:  # noqa: BLE001 - the refusal is the datum
            verdict = "REFUSED " + str(exc).splitlines()[0][:160]
        print(f"{scaling:7s} m={m:<5d} n={n:<5d} k={k:<5d} {verdict}", flush=True)
    for scaling, offset in itertools.product(("tensor", "rowcol"), (1, 2, 4)):
        try:
            call(scaling, 64, 256, 512, offset)
            torch.cuda.synchronize()
            verdict = "ok"
        except Exception as exc:  # noqa: BLE001
            verdict = "REFUSED " + str(exc).splitlines()[0][:160]
        print(f"{scaling:7s} m=64 n=256 k=512 scale_a {4 * offset} bytes into its allocation: {verdict}", flush=True)


if __name__ == "__main__":
    main()
