// hopper_check: standalone device check of the Hopper GEMM ladder (no torch; cuBLAS only through dlopen,
// for the reference timings). Built and run by run_check.sh:
//
//   ./hopper_check [--quick] [--steps a,b,...] [--samples N] [--no-fork]
//
// For each step (hopper.wgmma_tma ... hopper.best), in a child process of its own:
//   * correctness on small, ragged and strided shapes, for every input/output type combination
//     (f16/bf16 in x f32/f16/bf16 out): random inputs against an FP64 reference with a tolerance,
//     small-integer inputs bit for bit, alpha/beta with C read, K == 0, padding never read (NaN-filled)
//     and never written (sentinels), and the entry's refusal of lda % 8 != 0;
// then one child times every step that passed, and cuBLAS if it can be loaded, interleaved sample by
// sample: 4096^3 and 8192^3, f16 and bf16 (C in the input type), L2 flushed before every sample,
// median of the samples, in TFLOP/s. The table comes last.
//
// Watchdog: every launch is followed by cudaStreamQuery polling with a deadline; a kernel that does not
// finish prints TIMEOUT and its child exits non-zero (which tears the context down). The parent also
// kills a child that outlives its budget. The exit status is non-zero if anything failed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <library_types.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "gemmcompare/gemm_abi.h"

// The six entries, from extensions/hopper/instances/*.cu (default configurations).
extern "C" int gc_hopper_wgmma_tma(const gc_gemm_args*, char*, size_t);
extern "C" int gc_hopper_pipelined(const gc_gemm_args*, char*, size_t);
extern "C" int gc_hopper_warp_specialized(const gc_gemm_args*, char*, size_t);
extern "C" int gc_hopper_persistent(const gc_gemm_args*, char*, size_t);
extern "C" int gc_hopper_cluster(const gc_gemm_args*, char*, size_t);
extern "C" int gc_hopper_best(const gc_gemm_args*, char*, size_t);

using EntryFn = int (*)(const gc_gemm_args*, char*, size_t);
struct Impl {
  const char* name;
  EntryFn fn;
};
static const Impl kSteps[] = {
    {"wgmma_tma", gc_hopper_wgmma_tma},   {"pipelined", gc_hopper_pipelined}, {"warp_specialized", gc_hopper_warp_specialized},
    {"persistent", gc_hopper_persistent}, {"cluster", gc_hopper_cluster},     {"best", gc_hopper_best},
};

// ------------------------------------------------------------------------------------------------
// Small utilities

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static int g_result_fd = -1;  // the child's channel to the parent (machine-readable lines)
static void report(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (g_result_fd >= 0 && n > 0) {
    ssize_t w = write(g_result_fd, buf, static_cast<size_t>(std::min(n, static_cast<int>(sizeof buf) - 1)));
    (void)w;
  }
}

static void die(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  _exit(code);
}

#define CK(expr)                                                                                       \
  do {                                                                                                 \
    cudaError_t e_ = (expr);                                                                           \
    if (e_ != cudaSuccess) die(3, "CUDA ERROR %s at %s:%d: %s", #expr, __FILE__, __LINE__, cudaGetErrorString(e_)); \
  } while (0)

// Wait for the stream with a deadline: a hung kernel becomes TIMEOUT and the end of this process.
static double g_deadline_s = 5.0;  // per launch during the correctness checks (20 s while timing)
static void sync_or_die(cudaStream_t s, const char* who, const char* what) {
  const double t0 = now_s();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) die(3, "ERROR %s: %s failed on the device: %s", who, what, cudaGetErrorString(e));
    if (now_s() - t0 > g_deadline_s)
      die(124, "TIMEOUT %s: %s did not finish within %.0f s (kernel hang?)", who, what, g_deadline_s);
    usleep(20);
  }
}

// ------------------------------------------------------------------------------------------------
// Element types on the host side

template <class T>
struct HostType;
template <>
struct HostType<float> {
  static constexpr gc_dtype abi = GC_F32;
  static constexpr const char* name = "f32";
  static float to_f(float v) { return v; }
  static float from_f(float v) { return v; }
  static uint32_t bits(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
  }
};
template <>
struct HostType<__half> {
  static constexpr gc_dtype abi = GC_F16;
  static constexpr const char* name = "f16";
  static float to_f(__half v) { return __half2float(v); }
  static __half from_f(float v) { return __float2half_rn(v); }
  static uint32_t bits(__half v) {
    uint16_t b;
    memcpy(&b, &v, 2);
    return b;
  }
};
template <>
struct HostType<__nv_bfloat16> {
  static constexpr gc_dtype abi = GC_BF16;
  static constexpr const char* name = "bf16";
  static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
  static uint32_t bits(__nv_bfloat16 v) {
    uint16_t b;
    memcpy(&b, &v, 2);
    return b;
  }
};

__device__ __forceinline__ float dev_to_f(float v) { return v; }
__device__ __forceinline__ float dev_to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float dev_to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T dev_from_f(float v);
template <>
__device__ __forceinline__ float dev_from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half dev_from_f<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 dev_from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// ------------------------------------------------------------------------------------------------
// Device helpers: deterministic fills, the FP64 reference, a max-difference reduction.

__device__ __forceinline__ uint32_t mix32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

enum FillMode { FILL_UNIFORM = 0, FILL_INT2 = 1, FILL_INT4 = 2 };

// rows x cols inside a rows x ld allocation; the padding columns get `pad` (NaN: must never be read).
template <class T>
__global__ void fill_kernel(T* p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, int mode, float pad) {
  const int64_t total = rows * ld;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % ld;
    float v;
    if (c >= cols) {
      v = pad;
    } else {
      const uint32_t h = mix32(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(i));
      if (mode == FILL_UNIFORM) v = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
      else if (mode == FILL_INT2) v = static_cast<float>(static_cast<int>(h % 5u) - 2);
      else v = static_cast<float>(static_cast<int>(h % 9u) - 4);
    }
    p[i] = dev_from_f<T>(v);
  }
}

template <class T>
void fill(T* p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, int mode, float pad, cudaStream_t s) {
  const int64_t total = rows * ld;
  const int blocks = static_cast<int>(std::min<int64_t>((total + 255) / 256, 65536));
  fill_kernel<T><<<std::max(blocks, 1), 256, 0, s>>>(p, rows, cols, ld, seed, mode, pad);
  CK(cudaGetLastError());
}

// ref[i][j] = alpha * sum_k A[i][k] B[k][j] + beta * C0[i][j], in FP64; mag: the same sum of magnitudes
// (the scale of the rounding error any order of FP32 accumulation can make).
template <class TIn, class TOut>
__global__ void reference_kernel(const TIn* a, const TIn* b, const TOut* c0, int m, int n, int k, int64_t lda,
                                 int64_t ldb, int64_t ldc, double alpha, double beta, double* ref, double* mag) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= m || j >= n) return;
  double s = 0.0, sa = 0.0;
  const TIn* ar = a + static_cast<int64_t>(i) * lda;
  const TIn* br = b + static_cast<int64_t>(j) * ldb;
  for (int kk = 0; kk < k; ++kk) {
    const double x = static_cast<double>(dev_to_f(ar[kk])) * static_cast<double>(dev_to_f(br[kk]));
    s += x;
    sa += fabs(x);
  }
  double r = alpha * s, ra = fabs(alpha) * sa;
  if (beta != 0.0) {
    const double old = static_cast<double>(dev_to_f(c0[static_cast<int64_t>(i) * ldc + j]));
    r += beta * old;
    ra += fabs(beta * old);
  }
  ref[static_cast<int64_t>(i) * n + j] = r;
  mag[static_cast<int64_t>(i) * n + j] = ra;
}

// max |x - y| and max |y| over an m x n row-major pair (ld = n), as float bits (non-negative floats order
// like their bit patterns); NaN anywhere forces +inf.
template <class T>
__global__ void maxdiff_kernel(const T* x, const T* y, int64_t count, unsigned* out) {
  float md = 0.f, my = 0.f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float a = dev_to_f(x[i]), b = dev_to_f(y[i]);
    float d = fabsf(a - b);
    if (!(d == d)) d = INFINITY;
    md = fmaxf(md, d);
    my = fmaxf(my, fabsf(b));
  }
  atomicMax(&out[0], __float_as_uint(md));
  atomicMax(&out[1], __float_as_uint(my));
}

// ------------------------------------------------------------------------------------------------
// cuBLAS through dlopen (reference timings only; optional).

struct Cublas {
  using CreateFn = int (*)(void**);
  using SetStreamFn = int (*)(void*, cudaStream_t);
  using GemmExFn = int (*)(void*, int, int, int, int, int, const void*, const void*, cudaDataType, int, const void*,
                           cudaDataType, int, const void*, void*, cudaDataType, int, int, int);
  void* handle = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmExFn gemm_ex = nullptr;
  std::string lib;

  bool load() {
    std::vector<std::string> names;
    if (const char* env = getenv("GC_CUBLAS_LIB")) names.push_back(env);
    for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) names.push_back(n);
    for (const auto& n : names) {
      void* so = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!so) continue;
      auto create = reinterpret_cast<CreateFn>(dlsym(so, "cublasCreate_v2"));
      set_stream = reinterpret_cast<SetStreamFn>(dlsym(so, "cublasSetStream_v2"));
      gemm_ex = reinterpret_cast<GemmExFn>(dlsym(so, "cublasGemmEx"));
      if (create && set_stream && gemm_ex && create(&handle) == 0) {
        lib = n;
        return true;
      }
    }
    return false;
  }
};
static Cublas g_cublas;

// C (row-major, m x n) = A (row-major m x k) * B (n x k, K contiguous): in cuBLAS's column-major terms
// C^T (n x m) = B^T A, i.e. op(A') = T on B (ldb), op(B') = N on A (lda): the "TN" GEMM.
extern "C" int cublas_entry(const gc_gemm_args* a, char* err, size_t len) {
  const cudaDataType in = a->dtype_a == GC_F16 ? CUDA_R_16F : CUDA_R_16BF;
  const cudaDataType out = a->dtype_c == GC_F32 ? CUDA_R_32F : (a->dtype_c == GC_F16 ? CUDA_R_16F : CUDA_R_16BF);
  const float alpha = static_cast<float>(a->alpha), beta = static_cast<float>(a->beta);
  if (g_cublas.set_stream(g_cublas.handle, a->stream) != 0) return gc_fail(err, len, "cublasSetStream failed");
  const int rc = g_cublas.gemm_ex(g_cublas.handle, 1, 0, static_cast<int>(a->n), static_cast<int>(a->m),
                                  static_cast<int>(a->k), &alpha, a->b, in, static_cast<int>(a->ldb), a->a, in,
                                  static_cast<int>(a->lda), &beta, a->c, out, static_cast<int>(a->ldc), 68 /*COMPUTE_32F*/,
                                  -1 /*GEMM_DEFAULT*/);
  if (rc != 0) {
    snprintf(err, len, "cublasGemmEx returned %d", rc);
    return 1;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------
// Correctness

struct Case {
  int m, n, k;
  int lda_pad, ldb_pad, ldc_pad;  // extra elements per row (NaN-filled for A and B; sentinels for C)
  int c_offset;                   // C starts this many elements into its allocation (misaligned C)
  int mode;                       // FILL_UNIFORM (tolerance) or FILL_INT2 (bit for bit)
  double alpha, beta;
};

static const Case kCases[] = {
    // m, n, k, pads, c_offset, mode, alpha, beta
    {64, 64, 64, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {128, 256, 64, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {1, 1, 8, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {7, 9, 16, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {129, 65, 72, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {257, 263, 264, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {300, 520, 8, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},            // K below one k block
    {128, 256, 1024, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},         // 16 k tiles: the stage ring wraps 4 times
    {611, 613, 616, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {1000, 1000, 1000, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},
    {868, 1000, 136, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},         // 7 tile rows: a cluster pair hangs past M
    {2200, 4100, 200, 0, 0, 0, 0, FILL_UNIFORM, 1.0, 0.0},        // 18 x 17 tiles: several per persistent CTA
    {200, 136, 96, 8, 16, 3, 1, FILL_UNIFORM, 1.0, 0.0},          // padded A/B rows, odd ldc, misaligned C
    {333, 517, 4104, 24, 8, 5, 0, FILL_UNIFORM, 1.0, 0.0},        // long K with a tail, padded
    {128, 256, 64, 0, 0, 0, 0, FILL_INT2, 1.0, 0.0},              // exact
    {257, 263, 264, 0, 0, 0, 0, FILL_INT2, 1.0, 0.0},             // exact
    {1000, 1000, 1000, 0, 0, 0, 0, FILL_INT2, 1.0, 0.0},          // exact (|C| up to 4000)
    {611, 613, 616, 8, 0, 2, 0, FILL_INT2, 0.5, -1.0},            // exact, alpha and beta, C read
    {130, 300, 128, 0, 0, 0, 1, FILL_INT2, 2.0, 3.0},             // exact, beta, misaligned C
    {70, 70, 0, 8, 8, 2, 0, FILL_INT2, 1.0, 2.0},                 // K == 0: C = beta * C
    {70, 70, 0, 8, 8, 0, 0, FILL_INT2, 1.0, 0.0},                 // K == 0, beta == 0: C = 0
};

struct Tally {
  int pass = 0, fail = 0;
  double worst = 0.0;  // worst error / tolerance over the tolerance cases
};

static const float kSentinel = 12345.0f;  // stored after rounding to C's type; compared by bits

template <class TIn, class TOut>
static void run_case(const Impl& impl, const Case& cs, cudaStream_t s, Tally& t) {
  using HI = HostType<TIn>;
  using HO = HostType<TOut>;
  const int m = cs.m, n = cs.n, k = cs.k;
  const int64_t lda = std::max(k, 8) + cs.lda_pad, ldb = std::max(k, 8) + cs.ldb_pad, ldc = n + cs.ldc_pad;
  const bool exact = cs.mode != FILL_UNIFORM;
  TIn *a = nullptr, *b = nullptr;
  TOut *c_alloc = nullptr, *c0_alloc = nullptr;
  double *ref = nullptr, *mag = nullptr;
  const int64_t c_elems = static_cast<int64_t>(m) * ldc + cs.c_offset;
  CK(cudaMalloc(&a, sizeof(TIn) * std::max<int64_t>(static_cast<int64_t>(m) * lda, 1)));
  CK(cudaMalloc(&b, sizeof(TIn) * std::max<int64_t>(static_cast<int64_t>(n) * ldb, 1)));
  CK(cudaMalloc(&c_alloc, sizeof(TOut) * c_elems));
  CK(cudaMalloc(&c0_alloc, sizeof(TOut) * c_elems));
  CK(cudaMalloc(&ref, sizeof(double) * m * n));
  CK(cudaMalloc(&mag, sizeof(double) * m * n));
  TOut* c = c_alloc + cs.c_offset;
  TOut* c0 = c0_alloc + cs.c_offset;
  const uint64_t seed = static_cast<uint64_t>(m) * 1000003u + n * 1009u + k + cs.mode * 7u;
  fill(a, m, k, lda, seed + 1, cs.mode, NAN, s);
  fill(b, n, k, ldb, seed + 2, cs.mode, NAN, s);
  // C: beta != 0 -> small integers (read by the kernel); beta == 0 -> NaN (must not be read); padding
  // columns and the c_offset prefix -> sentinel (must not be written).
  CK(cudaMemsetAsync(c_alloc, 0, sizeof(TOut) * c_elems, s));
  fill(c, m, n, ldc, seed + 3, FILL_INT4, kSentinel, s);
  if (cs.beta == 0.0) {
    // The in-range part becomes NaN (a kernel that reads C with beta == 0, or leaves an element
    // unwritten, shows up as a NaN); the padding keeps its sentinels.
    std::vector<TOut> h(static_cast<size_t>(c_elems));
    CK(cudaMemcpyAsync(h.data(), c_alloc, sizeof(TOut) * c_elems, cudaMemcpyDeviceToHost, s));
    sync_or_die(s, impl.name, "setup copy");
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) h[cs.c_offset + static_cast<int64_t>(i) * ldc + j] = HO::from_f(NAN);
    CK(cudaMemcpyAsync(c_alloc, h.data(), sizeof(TOut) * c_elems, cudaMemcpyHostToDevice, s));
  }
  if (cs.c_offset) {
    std::vector<TOut> pre(cs.c_offset, HO::from_f(kSentinel));
    CK(cudaMemcpyAsync(c_alloc, pre.data(), sizeof(TOut) * cs.c_offset, cudaMemcpyHostToDevice, s));
  }
  CK(cudaMemcpyAsync(c0_alloc, c_alloc, sizeof(TOut) * c_elems, cudaMemcpyDeviceToDevice, s));
  {
    dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
    reference_kernel<TIn, TOut><<<grid, block, 0, s>>>(a, b, c0, m, n, k, lda, ldb, ldc, cs.alpha, cs.beta, ref, mag);
    CK(cudaGetLastError());
  }
  sync_or_die(s, impl.name, "reference");

  gc_gemm_args args = {};
  args.a = a;
  args.b = b;
  args.c = c;
  args.m = m;
  args.n = n;
  args.k = k;
  args.lda = lda;
  args.ldb = ldb;
  args.ldc = ldc;
  args.order_a = GC_ROW;
  args.order_b = GC_COL;
  args.order_c = GC_ROW;
  args.dtype_a = HI::abi;
  args.dtype_b = HI::abi;
  args.dtype_c = HO::abi;
  args.dtype_acc = GC_F32;
  args.math = GC_MATH_STRICT;
  args.alpha = cs.alpha;
  args.beta = cs.beta;
  args.epilogue = GC_EPI_NONE;
  args.stream = s;
  char err[512] = {0};
  char what[160];
  snprintf(what, sizeof what, "%dx%dx%d %s->%s", m, n, k, HI::name, HO::name);
  const int rc = impl.fn(&args, err, sizeof err);
  if (rc != 0) {
    printf("  FAIL %-16s %-28s entry returned %d: %s\n", impl.name, what, rc, err);
    ++t.fail;
  } else {
    sync_or_die(s, impl.name, what);
    std::vector<TOut> out(static_cast<size_t>(c_elems));
    std::vector<double> href(static_cast<size_t>(m) * n), hmag(static_cast<size_t>(m) * n);
    CK(cudaMemcpyAsync(out.data(), c_alloc, sizeof(TOut) * c_elems, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(href.data(), ref, sizeof(double) * m * n, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(hmag.data(), mag, sizeof(double) * m * n, cudaMemcpyDeviceToHost, s));
    sync_or_die(s, impl.name, "result copy");
    const double eps_out = std::is_same<TOut, float>::value ? 1.0 / (1 << 22)
                           : std::is_same<TOut, __half>::value ? 1.0 / (1 << 10)
                                                               : 1.0 / (1 << 7);
    double worst = 0.0;
    int64_t bad = 0, first_i = -1, first_j = -1;
    double first_got = 0, first_want = 0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        const TOut got = out[cs.c_offset + static_cast<int64_t>(i) * ldc + j];
        const double want = href[static_cast<size_t>(i) * n + j];
        const double g = HO::to_f(got);
        bool ok;
        if (exact) {
          // Bit for bit up to the sign of zero: the exact sum, rounded once to C's type.
          ok = g == static_cast<double>(HO::to_f(HO::from_f(static_cast<float>(want))));
        } else {
          // Output rounding plus 2^-14 of sum |a*b| for the accumulation order (the tensor core's internal
          // adds are not documented to be IEEE FP32); a layout or pipeline bug errs by O(|C|), far above.
          const double tol = eps_out * std::fabs(want) + hmag[static_cast<size_t>(i) * n + j] * (1.0 / (1 << 14)) + 1e-30;
          const double e = std::fabs(g - want) / tol;
          ok = std::isfinite(g) && e <= 1.0;
          if (std::isfinite(e)) worst = std::max(worst, e);
        }
        if (!ok) {
          if (bad == 0) first_i = i, first_j = j, first_got = g, first_want = want;
          ++bad;
        }
      }
    }
    // Padding columns and the prefix must still hold what was there before.
    int64_t clobbered = 0;
    const uint32_t sentinel_bits = HO::bits(HO::from_f(kSentinel));
    for (int64_t e = 0; e < cs.c_offset; ++e) clobbered += HO::bits(out[e]) != sentinel_bits;
    for (int i = 0; i < m; ++i)
      for (int64_t j = n; j < ldc; ++j) clobbered += HO::bits(out[cs.c_offset + i * ldc + j]) != sentinel_bits;
    if (bad || clobbered) {
      printf("  FAIL %-16s %-28s %lld wrong (first (%lld,%lld): got %.6g want %.6g), %lld padding elements written\n",
             impl.name, what, static_cast<long long>(bad), static_cast<long long>(first_i), static_cast<long long>(first_j),
             first_got, first_want, static_cast<long long>(clobbered));
      ++t.fail;
    } else {
      ++t.pass;
      if (!exact) t.worst = std::max(t.worst, worst);
    }
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c_alloc);
  cudaFree(c0_alloc);
  cudaFree(ref);
  cudaFree(mag);
}

// lda not a multiple of 8 (K odd, contiguous): the entry must refuse, without launching anything.
static void run_reject(const Impl& impl, cudaStream_t s, Tally& t) {
  const int m = 64, n = 64, k = 65;
  __half *a = nullptr, *b = nullptr;
  float* c = nullptr;
  CK(cudaMalloc(&a, sizeof(__half) * m * k));
  CK(cudaMalloc(&b, sizeof(__half) * n * k));
  CK(cudaMalloc(&c, sizeof(float) * m * n));
  gc_gemm_args args = {};
  args.a = a;
  args.b = b;
  args.c = c;
  args.m = m;
  args.n = n;
  args.k = k;
  args.lda = k;
  args.ldb = k;
  args.ldc = n;
  args.order_a = GC_ROW;
  args.order_b = GC_COL;
  args.order_c = GC_ROW;
  args.dtype_a = GC_F16;
  args.dtype_b = GC_F16;
  args.dtype_c = GC_F32;
  args.dtype_acc = GC_F32;
  args.math = GC_MATH_STRICT;
  args.alpha = 1.0;
  args.beta = 0.0;
  args.stream = s;
  char err[512] = {0};
  const int rc = impl.fn(&args, err, sizeof err);
  if (rc != 0 && err[0] && cudaGetLastError() == cudaSuccess) {
    ++t.pass;
    printf("  ok   %-16s refuses K=65 (lda=65): %s\n", impl.name, err);
  } else {
    ++t.fail;
    printf("  FAIL %-16s K=65 with lda=65 was not refused (rc=%d, err='%s')\n", impl.name, rc, err);
  }
  sync_or_die(s, impl.name, "reject");
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

static int check_step(const Impl& impl) {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Tally t;
  const double t0 = now_s();
  for (const Case& cs : kCases) {
    run_case<__half, float>(impl, cs, s, t);
    run_case<__half, __half>(impl, cs, s, t);
    run_case<__half, __nv_bfloat16>(impl, cs, s, t);
    run_case<__nv_bfloat16, float>(impl, cs, s, t);
    run_case<__nv_bfloat16, __half>(impl, cs, s, t);
    run_case<__nv_bfloat16, __nv_bfloat16>(impl, cs, s, t);
  }
  run_reject(impl, s, t);
  printf("%s %-16s %d/%d checks passed, worst error %.3f of tolerance (%.1f s)\n", t.fail ? "FAIL" : "PASS", impl.name,
         t.pass, t.pass + t.fail, t.worst, now_s() - t0);
  fflush(stdout);
  report("CHECK %s %d %d %.4f\n", impl.name, t.pass, t.pass + t.fail, t.worst);
  return t.fail ? 1 : 0;
}

// ------------------------------------------------------------------------------------------------
// Timing

template <class T>
static int time_dtype(const std::vector<Impl>& impls, int size, int samples, T* a, T* b, T* c, T* cref, unsigned* diff,
                      void* flush, size_t flush_bytes, cudaStream_t s) {
  using H = HostType<T>;
  fill(a, size, size, size, 11, FILL_UNIFORM, 0.f, s);
  fill(b, size, size, size, 12, FILL_UNIFORM, 0.f, s);
  sync_or_die(s, "timing", "fill");
  gc_gemm_args args = {};
  args.a = a;
  args.b = b;
  args.c = c;
  args.m = args.n = args.k = size;
  args.lda = args.ldb = args.ldc = size;
  args.order_a = GC_ROW;
  args.order_b = GC_COL;
  args.order_c = GC_ROW;
  args.dtype_a = args.dtype_b = args.dtype_c = H::abi;
  args.dtype_acc = GC_F32;
  args.math = GC_MATH_STRICT;
  args.alpha = 1.0;
  args.beta = 0.0;
  args.stream = s;
  char err[512];
  char what[96];
  int failures = 0;
  const int64_t count = static_cast<int64_t>(size) * size;
  std::vector<bool> ok(impls.size(), true);

  // Warm up, and compare every result with the first implementation's (cuBLAS when it is there).
  for (size_t i = 0; i < impls.size(); ++i) {
    snprintf(what, sizeof what, "%s %d^3 warm-up", H::name, size);
    for (int w = 0; w < 2; ++w) {
      args.c = (i == 0) ? cref : c;
      err[0] = 0;
      if (impls[i].fn(&args, err, sizeof err) != 0) {
        printf("  FAIL %s %s: %s\n", impls[i].name, what, err);
        ok[i] = false;
        ++failures;
        break;
      }
      sync_or_die(s, impls[i].name, what);
    }
    if (i == 0 || !ok[i]) continue;
    CK(cudaMemsetAsync(diff, 0, 2 * sizeof(unsigned), s));
    maxdiff_kernel<T><<<1024, 256, 0, s>>>(c, cref, count, diff);
    CK(cudaGetLastError());
    unsigned h[2];
    CK(cudaMemcpyAsync(h, diff, sizeof h, cudaMemcpyDeviceToHost, s));
    sync_or_die(s, impls[i].name, "compare");
    float md, my;
    memcpy(&md, &h[0], 4);
    memcpy(&my, &h[1], 4);
    const double rel = my > 0 ? md / my : md;
    const bool agree = std::isfinite(rel) && rel < 1e-2;
    printf("  %s %-16s %s %d^3: max |C - C_%s| = %.3g (%.2e of max |C|)\n", agree ? "ok  " : "FAIL", impls[i].name, H::name,
           size, impls[0].name, md, rel);
    report("CONSIST %s %s %d %.3e\n", impls[i].name, H::name, size, rel);
    if (!agree) {
      ok[i] = false;
      ++failures;
    }
  }

  std::vector<cudaEvent_t> ev0(impls.size()), ev1(impls.size());
  for (size_t i = 0; i < impls.size(); ++i) {
    CK(cudaEventCreate(&ev0[i]));
    CK(cudaEventCreate(&ev1[i]));
  }
  std::vector<std::vector<float>> ms(impls.size());
  args.c = c;
  for (int smp = 0; smp < samples; ++smp) {
    for (size_t i = 0; i < impls.size(); ++i) {  // interleaved: every implementation sees the same card state
      if (!ok[i]) continue;
      // Evict A, B and C from the 60 MB L2. The memset also keeps the GPU busy (~150 us) while the host
      // builds the tensor maps and launches, so that host work never shows between the two events.
      CK(cudaMemsetAsync(flush, smp & 0xff, flush_bytes, s));
      CK(cudaEventRecord(ev0[i], s));
      if (impls[i].fn(&args, err, sizeof err) != 0) die(3, "FAIL %s: launch failed while timing: %s", impls[i].name, err);
      CK(cudaEventRecord(ev1[i], s));
      snprintf(what, sizeof what, "%s %d^3 timing sample %d", H::name, size, smp);
      sync_or_die(s, impls[i].name, what);
      float t = 0.f;
      CK(cudaEventElapsedTime(&t, ev0[i], ev1[i]));
      ms[i].push_back(t);
    }
  }
  for (size_t i = 0; i < impls.size(); ++i) {
    if (!ok[i]) continue;
    std::vector<float> v = ms[i];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2];
    const double tflops = 2.0 * size * static_cast<double>(size) * size / (med * 1e-3) / 1e12;
    printf("  time %-16s %s %d^3: median %.3f ms (min %.3f, max %.3f) = %.1f TFLOP/s\n", impls[i].name, H::name, size, med,
           v.front(), v.back(), tflops);
    report("TIME %s %s %d %.2f\n", impls[i].name, H::name, size, tflops);
    cudaEventDestroy(ev0[i]);
    cudaEventDestroy(ev1[i]);
  }
  fflush(stdout);
  return failures;
}

static int time_steps(const std::vector<Impl>& steps, int samples) {
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, %.0f MB L2, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
         prop.major, prop.minor);
  report("DEVICE %s|%d\n", prop.name, prop.multiProcessorCount);
  std::vector<Impl> impls;
  if (g_cublas.load()) {
    printf("cuBLAS: %s\n", g_cublas.lib.c_str());
    impls.push_back({"cublas", cublas_entry});
  } else {
    printf("cuBLAS: not found (set GC_CUBLAS_LIB); results are compared with %s instead\n",
           steps.empty() ? "-" : steps[0].name);
  }
  impls.insert(impls.end(), steps.begin(), steps.end());
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int max_size = 8192;
  const size_t elems = static_cast<size_t>(max_size) * max_size;
  void *a, *b, *c, *cref, *flush;
  unsigned* diff;
  const size_t flush_bytes = 512ull << 20;
  CK(cudaMalloc(&a, elems * 2));
  CK(cudaMalloc(&b, elems * 2));
  CK(cudaMalloc(&c, elems * 2));
  CK(cudaMalloc(&cref, elems * 2));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&diff, 2 * sizeof(unsigned)));
  int failures = 0;
  g_deadline_s = 20.0;
  for (int size : {4096, 8192}) {
    failures += time_dtype<__half>(impls, size, samples, static_cast<__half*>(a), static_cast<__half*>(b),
                                   static_cast<__half*>(c), static_cast<__half*>(cref), diff, flush, flush_bytes, s);
    failures += time_dtype<__nv_bfloat16>(impls, size, samples, static_cast<__nv_bfloat16*>(a),
                                          static_cast<__nv_bfloat16*>(b), static_cast<__nv_bfloat16*>(c),
                                          static_cast<__nv_bfloat16*>(cref), diff, flush, flush_bytes, s);
  }
  return failures ? 1 : 0;
}

// ------------------------------------------------------------------------------------------------
// The parent: one child process per job, each with a time budget; results come back over a pipe.

struct ChildResult {
  int status = -1;  // exit status, or 128 + signal
  bool killed = false;
  std::string lines;
};

template <class F>
static ChildResult run_child(F&& body, double budget_s, bool no_fork) {
  ChildResult r;
  if (no_fork) {
    int fds[2];
    if (pipe(fds) != 0) die(2, "pipe failed");
    g_result_fd = fds[1];
    r.status = body();
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) r.lines.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    return r;
  }
  int fds[2];
  if (pipe(fds) != 0) die(2, "pipe failed");
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) die(2, "fork failed");
  if (pid == 0) {
    close(fds[0]);
    g_result_fd = fds[1];
    const int rc = body();
    fflush(stdout);
    _exit(rc);
  }
  close(fds[1]);
  const double t0 = now_s();
  bool open = true;
  for (;;) {
    if (open) {
      pollfd p = {fds[0], POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[4096];
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0) r.lines.append(buf, static_cast<size_t>(n));
        else open = false;
      }
    } else {
      usleep(100000);
    }
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      char buf[4096];
      ssize_t n;
      while (open && (n = read(fds[0], buf, sizeof buf)) > 0) r.lines.append(buf, static_cast<size_t>(n));
      r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    if (now_s() - t0 > budget_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      r.killed = true;
      r.status = 124;
      printf("TIMEOUT: child gave no result within %.0f s, killed\n", budget_s);
      break;
    }
  }
  close(fds[0]);
  return r;
}

int main(int argc, char** argv) {
  bool quick = false, no_fork = false;
  int samples = 20;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    else if (arg == "--no-fork") no_fork = true;
    else if (arg == "--samples" && i + 1 < argc) samples = std::max(1, atoi(argv[++i]));
    else if (arg == "--steps" && i + 1 < argc) {
      std::string list = argv[++i];
      size_t p0 = 0;
      while (p0 <= list.size()) {
        const size_t p1 = list.find(',', p0);
        only.push_back(list.substr(p0, p1 == std::string::npos ? std::string::npos : p1 - p0));
        if (p1 == std::string::npos) break;
        p0 = p1 + 1;
      }
    } else {
      printf("usage: %s [--quick] [--steps a,b,...] [--samples N] [--no-fork]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);

  std::vector<Impl> steps;
  for (const Impl& im : kSteps)
    if (only.empty() || std::find(only.begin(), only.end(), im.name) != only.end()) steps.push_back(im);

  struct Row {
    std::string check = "-";
    bool passed = false;
    std::map<std::string, double> tflops;  // "f16 4096" -> TFLOP/s
  };
  std::map<std::string, Row> rows;
  int exit_code = 0;

  printf("== correctness (%zu steps; each in its own process, %.0f s per launch at most)\n", steps.size(), g_deadline_s);
  std::vector<Impl> passed;
  for (const Impl& im : steps) {
    ChildResult r = run_child([&] { return check_step(im); }, 240.0, no_fork);
    Row& row = rows[im.name];
    int pass = 0, total = 0;
    double worst = 0;
    const char* line = strstr(r.lines.c_str(), "CHECK ");
    char nm[64];
    if (line && sscanf(line, "CHECK %63s %d %d %lf", nm, &pass, &total, &worst) == 4) {
      char buf[96];
      snprintf(buf, sizeof buf, "%s %d/%d", (r.status == 0 && pass == total) ? "PASS" : "FAIL", pass, total);
      row.check = buf;
    } else {
      char buf[48];
      snprintf(buf, sizeof buf, "%s (exit %d)", r.status == 124 ? "TIMEOUT" : r.status == 3 ? "CUDA ERROR" : "CRASH", r.status);
      row.check = buf;
    }
    row.passed = r.status == 0 && pass == total && total > 0;
    if (row.passed) passed.push_back(im);
    else exit_code = 1;
  }

  std::string device = "?";
  if (!quick && !passed.empty()) {
    printf("== timing (interleaved, L2 flushed per sample, median of %d)\n", samples);
    // If a step hangs or fails here, time the others again without it.
    std::vector<Impl> timed = passed;
    for (int attempt = 0; attempt < 3 && !timed.empty(); ++attempt) {
      ChildResult r = run_child([&] { return time_steps(timed, samples); }, 300.0, no_fork);
      const char* p = r.lines.c_str();
      std::vector<std::string> consist_bad;
      while (p && *p) {
        const char* eol = strchr(p, '\n');
        const std::string ln(p, eol ? static_cast<size_t>(eol - p) : strlen(p));
        char nm[64], dt[16];
        int size;
        double v;
        if (sscanf(ln.c_str(), "TIME %63s %15s %d %lf", nm, dt, &size, &v) == 4) {
          rows[nm].tflops[std::string(dt) + " " + std::to_string(size)] = v;
        } else if (sscanf(ln.c_str(), "CONSIST %63s %15s %d %lf", nm, dt, &size, &v) == 4) {
          if (!(v < 1e-2)) consist_bad.push_back(nm);
        } else if (ln.rfind("DEVICE ", 0) == 0) {
          device = ln.substr(7);
        }
        p = eol ? eol + 1 : nullptr;
      }
      for (const auto& nm : consist_bad) {
        rows[nm].check += " (differs from the reference at 4096/8192)";
        exit_code = 1;
      }
      if (r.status == 0) break;
      exit_code = 1;
      // Drop the step that was running when the child died: the first one without a full set of times.
      std::vector<Impl> next;
      bool dropped = false;
      for (const Impl& im : timed) {
        if (!dropped && rows[im.name].tflops.size() < 4) {
          rows[im.name].check += " (timing failed)";
          dropped = true;
          continue;
        }
        next.push_back(im);
      }
      if (!dropped) break;
      timed = next;
    }
  }

  // ---- the table -------------------------------------------------------------------------------
  const char* cols[] = {"f16 4096", "f16 8192", "bf16 4096", "bf16 8192"};
  printf("\n== hopper GEMM ladder%s%s: TFLOP/s (%% of cuBLAS), C in the input type\n", device == "?" ? "" : " on ",
         device == "?" ? "" : device.c_str());
  printf("%-18s", "step");
  for (const char* c : cols) printf(" %16s", c);
  printf("  %s\n", "correctness");
  std::vector<std::string> order;
  if (rows.count("cublas")) order.push_back("cublas");
  for (const Impl& im : steps) order.push_back(im.name);
  for (const auto& name : order) {
    Row& row = rows[name];
    printf("%-18s", name.c_str());
    for (const char* c : cols) {
      char cell[32] = "-";
      auto it = row.tflops.find(c);
      if (it != row.tflops.end()) {
        auto ref = rows.count("cublas") ? rows["cublas"].tflops.find(c) : row.tflops.end();
        if (name != "cublas" && rows.count("cublas") && ref != rows["cublas"].tflops.end() && ref->second > 0)
          snprintf(cell, sizeof cell, "%.0f (%.0f%%)", it->second, 100.0 * it->second / ref->second);
        else
          snprintf(cell, sizeof cell, "%.0f", it->second);
      }
      printf(" %16s", cell);
    }
    printf("  %s\n", name == "cublas" ? "(reference)" : row.check.c_str());
  }
  printf("%s\n", exit_code ? "RESULT: FAILURES (see above)" : "RESULT: all checks passed");
  return exit_code;
}
