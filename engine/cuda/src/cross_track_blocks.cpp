#include "cross_track_blocks.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::gpu {

namespace k = edgetap::kernels::cuda;

namespace {

// The most the cross-track attention's scores and probabilities take at once: past
// it they are computed a block of rows at a time (the same products, more of them).
// At 1,024 points + the support grid, edgetap-large FP16: 16 instead of 78 MB.
constexpr std::size_t kCrossScoreBytes = std::size_t{16} << 20;
constexpr int kCrossRowMultiple = 32;

// Rows of the [heads][rows][capacity] scores computed at once: all of them while
// they fit kCrossScoreBytes, else the most that fit, a multiple of kCrossRowMultiple.
int cross_track_rows(int heads, int capacity, std::size_t bytes_per_score) {
  const std::size_t per_row = static_cast<std::size_t>(heads) * static_cast<std::size_t>(capacity) * bytes_per_score;
  const auto fit = static_cast<int>(kCrossScoreBytes / per_row);
  if (fit >= capacity) return capacity;
  return std::max(kCrossRowMultiple, fit / kCrossRowMultiple * kCrossRowMultiple);
}

}  // namespace

template <class T>
void CrossTrackBlocks<T>::reserve(int capacity, int heads, int head_dim, cudaStream_t stream) {
  const std::size_t cap = static_cast<std::size_t>(capacity);
  qkv_t_.resize(cap * 3 * static_cast<std::size_t>(heads * head_dim), stream);
  rows_at_once_ = cross_track_rows(heads, capacity, sizeof(float) + sizeof(T));
  scores_.resize(static_cast<std::size_t>(heads) * rows_at_once_ * cap, stream);
  probs_.resize(static_cast<std::size_t>(heads) * rows_at_once_ * cap, stream);
}

template <class T>
void CrossTrackBlocks<T>::attend(const Blas& blas, const float* qkv, const float* bias, int S, int heads,
                                 int head_dim, T* attended, cudaStream_t stream) {
  const int width = heads * head_dim, dh = head_dim;
  k::bias_activation(qkv, bias, S, 3 * width, /*gelu=*/false, qkv_t_.data(), stream);
  const int rows_at_once = std::min(S, rows_at_once_);
  for (int r0 = 0; r0 < S; r0 += rows_at_once) {
    const int rows = std::min(rows_at_once, S - r0);
    const long long rs = static_cast<long long>(rows) * S;
    const T* q = qkv_t_.data() + static_cast<std::size_t>(r0) * 3 * width;
    blas.gemm_nt_batched<T>(rows, S, dh, q, 3 * width, dh, qkv_t_.data() + width, 3 * width, dh, scores_.data(), S, rs,
                            heads);
    k::softmax_rows(scores_.data(), heads * rows, S, 1.f / std::sqrt(static_cast<float>(dh)), probs_.data(), stream);
    blas.gemm_nn_batched<T>(rows, dh, S, probs_.data(), S, rs, qkv_t_.data() + 2 * width, 3 * width, dh,
                            attended + static_cast<std::size_t>(r0) * width, width, dh, heads);
  }
}

template class CrossTrackBlocks<float>;
template class CrossTrackBlocks<__half>;

}  // namespace edgetap::gpu
