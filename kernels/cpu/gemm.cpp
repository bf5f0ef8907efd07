// GEMM for the CPU engine: BLAS when built with it (measured to pay: see
// bench/NOTES.md), else a cache-blocked loop.
#include <algorithm>
#include <cstring>

#include "edgetap/kernels/cpu.hpp"

#ifdef EDGETAP_HAVE_BLAS
#include <cblas.h>
#endif

namespace edgetap::kernels::cpu {

void gemm_nt(int M, int N, int K, const float* A, const float* B, const float* bias, float* C, bool accumulate) {
#ifdef EDGETAP_HAVE_BLAS
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, A, K, B, K, accumulate ? 1.0f : 0.0f, C, N);
#else
  if (!accumulate) std::memset(C, 0, sizeof(float) * static_cast<std::size_t>(M) * N);
  constexpr int kBlock = 64;
  for (int i0 = 0; i0 < M; i0 += kBlock) {
    for (int j0 = 0; j0 < N; j0 += kBlock) {
      const int i1 = std::min(M, i0 + kBlock), j1 = std::min(N, j0 + kBlock);
      for (int i = i0; i < i1; ++i) {
        const float* a = A + static_cast<std::size_t>(i) * K;
        for (int j = j0; j < j1; ++j) {
          const float* b = B + static_cast<std::size_t>(j) * K;
          float sum = 0.f;
          for (int k = 0; k < K; ++k) sum += a[k] * b[k];
          C[static_cast<std::size_t>(i) * N + j] += sum;
        }
      }
    }
  }
#endif
  if (bias != nullptr) {
    for (int i = 0; i < M; ++i) {
      float* c = C + static_cast<std::size_t>(i) * N;
      for (int j = 0; j < N; ++j) c[j] += bias[j];
    }
  }
}

}  // namespace edgetap::kernels::cpu
