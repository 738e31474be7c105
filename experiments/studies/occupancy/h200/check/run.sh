#!/bin/sh
# The device command that produced occupancy.csv (run from the repository root on the lent H200).
set -e
cd experiments/studies/occupancy/h200/check
nvcc -O3 -gencode=arch=compute_90,code=sm_90 -Xptxas -v -o /tmp/occupancy_check occupancy_check.cu 2> "$OUT/ptxas.txt"
/tmp/occupancy_check > "$OUT/occupancy.csv"
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$OUT/ptxas.txt"
head -3 "$OUT/occupancy.csv"; wc -l "$OUT/occupancy.csv"
