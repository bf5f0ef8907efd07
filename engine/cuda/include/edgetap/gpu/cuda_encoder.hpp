// The CNN encoder on the GPU: the CPU encoder's network (engine::CpuEncoder)
// through cuDNN, NHWC, in T = float or __half with float accumulation. The
// feature pyramid it returns stays on the device and is valid until the next
// encode. Buffers, tensor descriptors, algorithms and workspace are made the
// first time a frame size is seen; encoding a frame of a known size allocates
// nothing, never synchronizes and can be captured into a CUDA graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
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

  // Batches, for clips known ahead (gpu::CudaStreamingSession::encode_ahead):
  // the same network over several frames in each cuDNN call. The results are
  // those of encode() frame by frame up to the convolutions' summation order.
  // Device bytes the buffers of one frame of this size take (a batch takes
  // that many per frame).
  std::size_t frame_bytes(int height, int width) const;
  // Makes a batch program for `frames` frames of this size (set-up: not while
  // capturing).
  void prepare_batch(int height, int width, int frames);
  // rgb: device memory, `frames` (at most the prepared batch) frames one after
  // the other, each as encode() takes it. Enqueued on the stream.
  void encode_batch(const std::uint8_t* rgb, int frames, int height, int width);
  // Enqueues the copy of batch frame *frame (device memory, read when the copy
  // runs, so a captured graph takes whichever frame the host names) into the
  // pyramid encode() returns, and returns that pyramid.
  kernels::cuda::PyramidView<T> take_batched(const int* frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgetap::gpu
