"""Predict, then measure: pure-Python models of what a GEMM kernel can reach on a given GPU.

Nothing here touches a GPU or imports torch, so every model runs (and is tested) on a CPU. One concept
per module:

  work        logical and executed FLOPs, padding to tile multiples, unique bytes, tile intensities
  traffic     operand traffic of a tiled GEMM (the panel model) and an HBM estimate from the raster order
  devices     the device table (datasheet peaks and per-SM limits) and its override from a live device
  ceilings    issue-rate ceilings: where a kernel's math instruction cannot reach the datasheet peak
  occupancy   CTAs per SM from registers, shared memory and threads (the CUDA occupancy calculator's rules)
  waves       tile quantization: tiles, waves, tail fill and the efficiency bound they imply
  roofline    time >= max(flops / peak, bytes / bandwidth), and the ridge point
  datapath    the L1/shared-memory data path: 128-byte wavefronts per CTA per K tile of the lab kernels
  kernels     what the model needs to know about a kernel, and how a result row describes one
  predict     the predicted time of one kernel on one problem, with every input and intermediate kept
  access      memory-access models: 32-byte sectors per warp request, shared-memory bank conflicts
  heuristics  an optional adapter to NVIDIA's nvidia-matmul-heuristics (used only when importable)

Times are in milliseconds, rates in TFLOP/s, bandwidths in bytes per second, sizes in bytes.
"""
