// How the CUDA session's cross-track attention is cut into blocks of rows, so
// that its scores and probabilities never take more than kCrossScoreBytes.
#pragma once

#include <algorithm>
#include <cstddef>

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

}  // namespace edgetap::gpu
