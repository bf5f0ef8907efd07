// The CNN encoder on the GPU: the CPU encoder's network (engine::CpuEncoder)
// through cuDNN, NHWC, in T = float or __half with float accumulation. The
// feature pyramid it returns stays on the device and is valid until the next
// encode. Buffers, tensor descriptors, algorithms and workspace are made the
// first time a frame size is seen; encoding a frame of a known size allocates
// nothing, never synchronizes and can be captured into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/weights.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::gpu {

template <class T>
class CudaEncoder {
 public:
  // Uploads the encoder's weights; config and weights must outlive nothing (copied).
  CudaEncoder(const engine::ModelConfig& config, const engine::Weights& weights, cudaStream_t stream);
  ~CudaEncoder();
  CudaEncoder(const CudaEncoder&) = delete;
  CudaEncoder& operator=(const CudaEncoder&) = delete;

  // Makes the buffers and picks the algorithms for this frame size (call it
  // before capturing a graph; encode calls it too when the size is new).
  void prepare(int height, int width);
  // rgb: device memory, height x width x 3 bytes, rows contiguous, RGB order;
  // sides multiples of config.size_multiple. Enqueued on the stream.
  kernels::cuda::PyramidView<T> encode(const std::uint8_t* rgb, int height, int width);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgetap::gpu
