// Attention pieces of the transformer: the row softmax of the cross-track
// layer and one track's query against its cached keys (the temporal blocks).
#include <algorithm>
#include <cmath>
#include <limits>

#include "edgetap/kernels/cpu.hpp"
#include "lanes8.hpp"

namespace edgetap::kernels::cpu {

using lanes::float8;

// Built twice, for x86-64 with AVX2 + FMA and for the baseline.
#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target_clones("arch=x86-64-v3", "default")]]
#endif
void softmax_rows(float* x, int rows, int cols, float scale) {
  // The last 1-7 columns are padded with -infinity: no effect on the maximum, and
  // e^-87 (exp_nonpositive's floor, ~1e-38) per padded lane is nothing beside the sum's 1.
  const float lowest = -std::numeric_limits<float>::infinity();
  const int full = cols - cols % 8, rest = cols % 8;
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<std::size_t>(r) * cols;
    float8 m8 = lanes::splat8(lowest);
    for (int j = 0; j < full; j += 8) {
      const float8 v = lanes::load8(row + j);
      m8 = v > m8 ? v : m8;
    }
    if (rest > 0) {
      const float8 v = lanes::load8_partial(row + full, rest, lowest);
      m8 = v > m8 ? v : m8;
    }
    float best = lowest;
    for (int l = 0; l < 8; ++l) best = std::max(best, m8[l]);
    float8 s8 = {};
    for (int j = 0; j < full; j += 8) {
      const float8 e = lanes::exp_nonpositive((lanes::load8(row + j) - best) * scale);
      lanes::store8(row + j, e);
      s8 += e;
    }
    if (rest > 0) {
      const float8 e = lanes::exp_nonpositive((lanes::load8_partial(row + full, rest, lowest) - best) * scale);
      lanes::store8_partial(row + full, e, rest);
      s8 += e;
    }
    const float inv = 1.f / lanes::sum8(s8);
    for (int j = 0; j < cols; ++j) row[j] *= inv;
  }
}

void attend_cached(const float* q, const float* keys, const float* values, const float* bias, int n, int dh,
                   float scale, float* out) {
  float weight[kMaxCachedKeys];
  float best = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) {
    weight[j] = std::isinf(bias[j]) ? bias[j] : lanes::dot(q, keys + static_cast<std::size_t>(j) * dh, dh) * scale + bias[j];
    best = std::max(best, weight[j]);
  }
  float total = 0.f;
  for (int j = 0; j < n; ++j) total += (weight[j] = std::isinf(weight[j]) ? 0.f : std::exp(weight[j] - best));
  std::fill_n(out, dh, 0.f);
  for (int j = 0; j < n; ++j) {
    if (weight[j] == 0.f) continue;
    const float a = weight[j] / total;
    const float* v = values + static_cast<std::size_t>(j) * dh;
    for (int d = 0; d < dh; ++d) out[d] += a * v[d];
  }
}

}  // namespace edgetap::kernels::cpu
