// Bilinear sampling and the local window correlation (the CPU twin of the
// fused CUDA correlation kernel).
#include <cmath>
#include <cstring>

#include "edgetap/kernels/cpu.hpp"
#include "lanes8.hpp"

namespace edgetap::kernels::cpu {

void bilinear_sample_hwc(const float* map, int H, int W, int C, float x, float y, float* out) {
  std::memset(out, 0, sizeof(float) * C);
  const float fx = std::floor(x), fy = std::floor(y);
  const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
  const float ax = x - fx, ay = y - fy;
  const float weights[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
  const int xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
  for (int n = 0; n < 4; ++n) {
    if (xs[n] < 0 || xs[n] >= W || ys[n] < 0 || ys[n] >= H || weights[n] == 0.f) continue;
    const float* v = map + (static_cast<std::size_t>(ys[n]) * W + xs[n]) * C;
    for (int c = 0; c < C; ++c) out[c] += weights[n] * v[c];
  }
}

// Built twice, for x86-64 with AVX2 + FMA and for the baseline; the loader
// picks the one the CPU runs (this loop is the engine's largest outside BLAS).
#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target_clones("arch=x86-64-v3", "default")]]
#endif
void window_correlation_hwc(const float* map, int H, int W, int C, float x, float y, int radius, const float* descs,
                            int n_desc, float* out) {
  // Dot products of every descriptor with every cell the window touches, then
  // bilinear weights: the same value as sampling first, with C-fold less work
  // per sample (cells are shared by neighbouring offsets). The touched cells
  // (64 x C floats at radius 3) stay in L1 across the descriptors.
  const int k = 2 * radius + 1;
  const float fx = std::floor(x), fy = std::floor(y);
  const int bx = static_cast<int>(fx) - radius, by = static_cast<int>(fy) - radius;
  const float ax = x - fx, ay = y - fy;
  const float scale = 1.f / std::sqrt(static_cast<float>(C));
  const int cells = k + 1;
  constexpr int kMaxCells = 16 * 16;  // (k+1)^2 cells, k <= 15
  float dots[kMaxCells];
  for (int d = 0; d < n_desc; ++d) {
    const float* desc = descs + static_cast<std::size_t>(d) * C;
    for (int cy = 0; cy < cells; ++cy) {
      const int gy = by + cy;
      const bool row_inside = gy >= 0 && gy < H;
      for (int cx = 0; cx < cells;) {
        const int gx = bx + cx;
        const auto cell = [&] { return map + (static_cast<std::size_t>(gy) * W + gx) * C; };
        if (row_inside && cx + 8 <= cells && gx >= 0 && gx + 8 <= W) {  // 8 cells of the map, side by side
          lanes::store8(dots + cy * cells + cx, lanes::dot8(cell(), desc, C));
          cx += 8;
        } else {
          dots[cy * cells + cx] = row_inside && gx >= 0 && gx < W ? lanes::dot(cell(), desc, C) : 0.f;
          ++cx;
        }
      }
    }
    float* o = out + static_cast<std::size_t>(d) * k * k;
    for (int oy = 0; oy < k; ++oy) {
      for (int ox = 0; ox < k; ++ox) {
        const float* c4 = dots + oy * cells + ox;
        o[oy * k + ox] =
            scale * ((1 - ay) * ((1 - ax) * c4[0] + ax * c4[1]) + ay * ((1 - ax) * c4[cells] + ax * c4[cells + 1]));
      }
    }
  }
}

}  // namespace edgetap::kernels::cpu
