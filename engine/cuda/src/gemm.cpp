#include "edgetap/gpu/gemm.hpp"

#include <cuda_fp16.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

namespace {

void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what + " failed: " + cublasGetStatusString(status));
  }
}

template <class T>
constexpr cudaDataType_t data_type() {
  if constexpr (std::is_same_v<T, __half>) {
    return CUDA_R_16F;
  } else {
    return CUDA_R_32F;
  }
}

// cuBLAS is column-major: a row-major X[r][c] with row stride ld is the
// column-major X^T. So row-major C = A * B^T is column-major C^T = B * A^T:
// cuBLAS's (op(B) = B^T of the column-major B^T, op(A) = the column-major A^T).
// Float accumulation always (CUBLAS_COMPUTE_32F: no TF32 for float inputs,
// tensor cores for half inputs).
constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;

// cuBLAS's own workspace, given explicitly so that captured graphs allocate
// nothing. Each camera's session has its own, so it is a camera's memory:
// 4 MiB on every device (cuBLAS's recommendation before Hopper). On an H100,
// 4 instead of the 32 MiB recommended for Hopper cost W2 0.7-1.7% per frame
// (bench/NOTES-gpu.md) and saved 28 MiB a camera.
constexpr std::size_t kWorkspaceBytes = std::size_t{4} << 20;

}  // namespace

Blas::Blas(cudaStream_t stream) : workspace_(kWorkspaceBytes, stream) {
  DeviceSetupSection setup;  // cublasCreate allocates and may load modules
  check_blas(cublasCreate(&handle_), "cublasCreate");
  check_blas(cublasSetStream(handle_, stream), "cublasSetStream");
  check_blas(cublasSetWorkspace(handle_, workspace_.data(), workspace_.bytes()), "cublasSetWorkspace");
}

Blas::~Blas() {
  if (handle_ == nullptr) return;
  DeviceSetupSection setup;
  cublasDestroy(handle_);
}

template <class T>
void Blas::gemm_nt(int M, int N, int K, const T* A, int lda, const T* B, int ldb, float* C, int ldc,
                   bool accumulate) const {
  if (M == 0 || N == 0) return;
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  check_blas(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, data_type<T>(), ldb, A,
                          data_type<T>(), lda, &beta, C, CUDA_R_32F, ldc, kCompute, CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx (A B^T)");
}

template <class T>
void Blas::gemm_nt_batched(int M, int N, int K, const T* A, int lda, long long stride_a, const T* B, int ldb,
                           long long stride_b, float* C, int ldc, long long stride_c, int batch) const {
  if (M == 0 || N == 0 || batch == 0) return;
  const float alpha = 1.f, beta = 0.f;
  check_blas(cublasGemmStridedBatchedEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, data_type<T>(), ldb,
                                        stride_b, A, data_type<T>(), lda, stride_a, &beta, C, CUDA_R_32F, ldc,
                                        stride_c, batch, kCompute, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx (A B^T)");
}

template <class T>
void Blas::gemm_nn_batched(int M, int N, int K, const T* A, int lda, long long stride_a, const T* B, int ldb,
                           long long stride_b, T* C, int ldc, long long stride_c, int batch) const {
  if (M == 0 || N == 0 || batch == 0) return;
  // Row-major C = A * B is column-major C^T = B^T * A^T, both already column-major as stored.
  const float alpha = 1.f, beta = 0.f;
  check_blas(cublasGemmStridedBatchedEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, data_type<T>(), ldb,
                                        stride_b, A, data_type<T>(), lda, stride_a, &beta, C, data_type<T>(), ldc,
                                        stride_c, batch, kCompute, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx (A B)");
}

#define EDGETAP_INSTANTIATE_GEMM(T)                                                                                 \
  template void Blas::gemm_nt<T>(int, int, int, const T*, int, const T*, int, float*, int, bool) const;            \
  template void Blas::gemm_nt_batched<T>(int, int, int, const T*, int, long long, const T*, int, long long, float*, \
                                         int, long long, int) const;                                                \
  template void Blas::gemm_nn_batched<T>(int, int, int, const T*, int, long long, const T*, int, long long, T*, int, \
                                         long long, int) const;
EDGETAP_INSTANTIATE_GEMM(float)
EDGETAP_INSTANTIATE_GEMM(__half)
#undef EDGETAP_INSTANTIATE_GEMM

}  // namespace edgetap::gpu
