// An owned non-blocking CUDA stream: every piece of a session's work, its
// stream-ordered allocations included, is enqueued on one of these. Declare it
// before the buffers allocated on it, so that it is destroyed after them.
#pragma once

#include <cuda_runtime_api.h>

#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

class CudaStream {
 public:
  CudaStream() {
    DeviceSetupSection setup;
    EDGETAP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    EDGETAP_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming));
  }
  ~CudaStream() {
    if (stream_ == nullptr) return;
    DeviceSetupSection setup;
    cudaStreamSynchronize(stream_);  // the frees enqueued by the buffers destroyed before it
    cudaEventDestroy(done_);
    cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }

  // Waits for the work enqueued so far asleep, not spinning. A plain stream
  // synchronization spins on a core (one context, many cores: CUDA's default):
  // 16 cameras waiting on the GPU at once held 16 cores so, and starved capture,
  // klt and the publisher.
  void wait() const {
    EDGETAP_CUDA_CHECK(cudaEventRecord(done_, stream_));
    EDGETAP_CUDA_CHECK(cudaEventSynchronize(done_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
};

}  // namespace edgetap::gpu
