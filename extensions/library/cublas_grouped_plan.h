// How library.cublas_grouped hands a grouped problem (gemm_abi.h, ABI 4) to cublasGemmGroupedBatchedEx.
//
// cuBLAS's "groups" are sets of problems of one shape; an MoE layer's experts differ only in M. So the experts
// with tokens are sorted by M and each run of equal Ms becomes one cuBLAS group (a balanced router gives many
// experts the same count: they then share one group, as a user batching them by hand would). Empty experts
// are left out: cuBLAS computes nothing for them and the harness's C has no rows for them.
//
// Plain C++ (no CUDA, no cuBLAS): tests/test_library_grouped.py compiles it into a host program and checks the
// plan for empty, single-row, equal and skewed groups.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gc_cublas_grouped {

struct Plan {
  std::vector<int> expert;      // cuBLAS's problem order: which expert each problem is (non-empty experts only)
  std::vector<int> m;           // per cuBLAS group: the experts' M (equal within the group)
  std::vector<int> group_size;  // per cuBLAS group: how many experts share that M
};

// The plan for `groups` experts with host row counts m_host; false (and nothing planned) when a count is
// negative or does not fit cuBLAS's int dimensions.
inline bool make_plan(const int64_t* m_host, int64_t groups, Plan* plan) {
  plan->expert.clear();
  plan->m.clear();
  plan->group_size.clear();
  for (int64_t g = 0; g < groups; ++g) {
    if (m_host[g] < 0 || m_host[g] > INT32_MAX) return false;
    if (m_host[g] > 0) plan->expert.push_back(static_cast<int>(g));
  }
  // by M, and by expert index within equal Ms (a stable order: the same routing gives the same call)
  std::stable_sort(plan->expert.begin(), plan->expert.end(),
                   [m_host](int x, int y) { return m_host[x] < m_host[y]; });
  for (int e : plan->expert) {
    const int m = static_cast<int>(m_host[e]);
    if (!plan->m.empty() && plan->m.back() == m) {
      ++plan->group_size.back();
    } else {
      plan->m.push_back(m);
      plan->group_size.push_back(1);
    }
  }
  return true;
}

}  // namespace gc_cublas_grouped
