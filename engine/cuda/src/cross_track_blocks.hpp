// The CUDA session's cross-track attention through cuBLAS, where the fused kernel
// (k::cross_attention) does not run: cut into blocks of rows, so that its scores
// and probabilities never take more than 16 MiB.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/gemm.hpp"

namespace edgetap::gpu {

// The blocked attention and its buffers: qkv with its bias as T [capacity][3 width],
// scores (float) and probabilities (T) [heads][rows_at_once][capacity].
template <class T>
class CrossTrackBlocks {
 public:
  // Room for `capacity` rows of `heads` heads of `head_dim` (contents not kept).
  void reserve(int capacity, int heads, int head_dim, cudaStream_t stream);

  // attended [S][width] (T) = per head softmax(Q K^T / sqrt(head_dim)) V, from qkv
  // [S][3 width] (float, without its bias) + bias [3 width]: per block of query rows,
  // the scores and the weighted values as products over the heads as a batch.
  void attend(const Blas& blas, const float* qkv, const float* bias, int S, int heads, int head_dim, T* attended,
              cudaStream_t stream);

 private:
  DeviceBuffer<T> qkv_t_, probs_;
  DeviceBuffer<float> scores_;
  int rows_at_once_ = 0;  // score rows computed at once
};

}  // namespace edgetap::gpu
