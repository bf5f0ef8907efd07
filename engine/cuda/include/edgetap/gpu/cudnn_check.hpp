// The cuDNN member of the EDGETAP_CUDA_CHECK family (kernels/cuda/check.hpp):
// a failed call throws std::runtime_error naming the call, cuDNN's message,
// the file and the line. Only the GPU library includes cuDNN, so this lives
// here rather than beside the CUDA-runtime checks.
#pragma once

#include <cudnn.h>

#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

inline void check_cudnn(cudnnStatus_t status, const char* what, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) {
    ::edgetap::kernels::cuda::throw_cuda_error(what, cudnnGetErrorString(status), file, line);
  }
}

}  // namespace edgetap::gpu

#define EDGETAP_CUDNN_CHECK(call) ::edgetap::gpu::check_cudnn((call), #call, __FILE__, __LINE__)
