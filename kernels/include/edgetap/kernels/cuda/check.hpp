// Error checks for the CUDA backend: every runtime, cuBLAS and cuDNN call and
// every launch goes through one of these, which throw std::runtime_error
// naming the call, the file and the line.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace edgetap::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(const char* what, const char* detail, const char* file, int line) {
  throw std::runtime_error(std::string(what) + " failed: " + detail + " (" + file + ":" + std::to_string(line) + ")");
}

inline void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(what, cudaGetErrorString(err), file, line);
}

}  // namespace edgetap::kernels::cuda

#define EDGETAP_CUDA_CHECK(call) ::edgetap::kernels::cuda::check_cuda((call), #call, __FILE__, __LINE__)
// After a kernel launch: the launch's own error (bad configuration), not the kernel's result.
#define EDGETAP_CUDA_LAUNCH_CHECK() ::edgetap::kernels::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
