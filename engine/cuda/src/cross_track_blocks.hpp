// The CUDA session's cross-track attention through cuBLAS, where the fused kernel
// (k::cross_attention) does not run: cut into blocks of rows, so that its scores
// and probabilities never take more than kCrossScoreBytes.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/gpu/gemm.hpp"

namespace edgetap::gpu {

// The most the cross-track attention's scores and probabilities take at once: past
// it they are computed a block of rows at a time (the same products, more of them).
// At 1,024 points + the support grid, edgetap-large FP16: 16 instead of 78 MB.
inline constexpr std::size_t kCrossScoreBytes = std::size_t{16} << 20;
inline constexpr int kCrossRowMultiple = 32;

// Rows of the [heads][rows][capacity] scores computed at once: all of them while
// they fit kCrossScoreBytes, else the most that fit, a multiple of kCrossRowMultiple.
inline int cross_track_rows(int heads, int capacity, std::size_t bytes_per_score) {
  const std::size_t per_row = static_cast<std::size_t>(heads) * static_cast<std::size_t>(capacity) * bytes_per_score;
  const auto fit = static_cast<int>(kCrossScoreBytes / per_row);
  if (fit >= capacity) return capacity;
  return std::max(kCrossRowMultiple, fit / kCrossRowMultiple * kCrossRowMultiple);
}

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
  int rows_at_once_ = 0;  // cross_track_rows
};

}  // namespace edgetap::gpu
