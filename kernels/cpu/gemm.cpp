// GEMM for the CPU engine: BLAS when built with it (measured to pay: see
// bench/NOTES.md), else a cache-blocked loop.
#include <algorithm>
#include <cstddef>

#include "edgetap/kernels/cpu.hpp"

#ifdef EDGETAP_HAVE_BLAS
#include <cblas.h>
#endif

namespace edgetap::kernels::cpu {

void gemm_strided(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed, float* C,
                  int ldc, bool accumulate) {
#ifdef EDGETAP_HAVE_BLAS
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda, B, ldb,
              accumulate ? 1.0f : 0.0f, C, ldc);
#else
  // B[j][t] is at B + j * ldb + t when transposed, else at B + t * ldb + j.
  const std::size_t step_j = b_transposed ? static_cast<std::size_t>(ldb) : 1;
  const std::size_t step_t = b_transposed ? 1 : static_cast<std::size_t>(ldb);
  constexpr int kBlock = 64;
  for (int i0 = 0; i0 < M; i0 += kBlock) {
    for (int j0 = 0; j0 < N; j0 += kBlock) {
      const int i1 = std::min(M, i0 + kBlock), j1 = std::min(N, j0 + kBlock);
      for (int i = i0; i < i1; ++i) {
        const float* a = A + static_cast<std::size_t>(i) * lda;
        float* c = C + static_cast<std::size_t>(i) * ldc;
        for (int j = j0; j < j1; ++j) {
          const float* b = B + static_cast<std::size_t>(j) * step_j;
          float sum = 0.f;
          for (int t = 0; t < K; ++t) sum += a[t] * b[static_cast<std::size_t>(t) * step_t];
          c[j] = accumulate ? c[j] + sum : sum;
        }
      }
    }
  }
#endif
}

void gemm_nt(int M, int N, int K, const float* A, const float* B, const float* bias, float* C, bool accumulate) {
  gemm_strided(M, N, K, A, K, B, K, true, C, N, accumulate);
  if (bias != nullptr) {
    for (int i = 0; i < M; ++i) {
      float* c = C + static_cast<std::size_t>(i) * N;
      for (int j = 0; j < N; ++j) c[j] += bias[j];
    }
  }
}

}  // namespace edgetap::kernels::cpu
