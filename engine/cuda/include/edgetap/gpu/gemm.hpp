// Matrix products of the CUDA engine through cuBLAS: T inputs (float or
// __half), float accumulation, tensor cores for __half. Row-major, as the CPU
// kernels: C[M, N] (+)= A[M, K] * B[N, K]^T.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "edgetap/gpu/device_buffer.hpp"

namespace edgetap::gpu {

// Owns a cuBLAS handle bound to one stream, with its own workspace on that
// stream (so that captured graphs allocate nothing and no two sessions share one).
class Blas {
 public:
  explicit Blas(cudaStream_t stream);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t handle() const noexcept { return handle_; }

  // C (float) = A * B^T, or C += A * B^T with accumulate. A is [M, K] with row
  // stride lda, B is [N, K] with row stride ldb, C [M, N] with row stride ldc.
  template <class T>
  void gemm_nt(int M, int N, int K, const T* A, int lda, const T* B, int ldb, float* C, int ldc,
               bool accumulate = false) const;
  // Per head h of `batch`: C_h (float) = A_h * B_h^T, A_h = A + h * stride_a ... (attention scores).
  template <class T>
  void gemm_nt_batched(int M, int N, int K, const T* A, int lda, long long stride_a, const T* B, int ldb,
                       long long stride_b, float* C, int ldc, long long stride_c, int batch) const;
  // Per head: C_h (T) = A_h [M, K] * B_h [K, N] (attention-weighted values).
  template <class T>
  void gemm_nn_batched(int M, int N, int K, const T* A, int lda, long long stride_a, const T* B, int ldb,
                       long long stride_b, T* C, int ldc, long long stride_c, int batch) const;

 private:
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
};

}  // namespace edgetap::gpu
