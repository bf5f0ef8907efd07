// Frames whose motion is known exactly, for the template-alignment tests (CPU
// and GPU): a smooth analytic texture moved by a known warp. Header-only:
// needs nothing but the standard library and edgetap/image.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "edgetap/image.hpp"

namespace edgetap::test {

inline constexpr int kTextureSide = 128;

// Grey level of a smooth texture at (x, y): sums of plane waves of several
// orientations, so that every patch constrains both directions.
inline double texture(double x, double y) {
  return 128 + 38 * std::sin(0.31 * x + 0.17 * y) + 30 * std::sin(-0.23 * x + 0.41 * y + 1) +
         24 * std::sin(0.53 * x - 0.29 * y + 2) + 16 * std::sin(0.07 * x + 0.61 * y + 0.5);
}

struct RgbFrame {
  std::vector<std::uint8_t> bytes;
  ImageView view() const { return ImageView{bytes.data(), kTextureSide, kTextureSide, 3 * kTextureSide}; }
};

// The frame showing `f` moved by u -> c + S (u - c) + shift (S row-major 2x2,
// c the frame centre): pixel x shows f at the inverse map of x.
inline RgbFrame render(const std::function<double(double, double)>& f, std::array<double, 4> S = {1, 0, 0, 1},
                       double sx = 0, double sy = 0) {
  const int n = kTextureSide;
  const double c = (n - 1) / 2.0;
  const double det = S[0] * S[3] - S[1] * S[2];
  const std::array<double, 4> inv{S[3] / det, -S[1] / det, -S[2] / det, S[0] / det};
  RgbFrame out;
  out.bytes.resize(static_cast<std::size_t>(3 * n * n));
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const double dx = x - c - sx, dy = y - c - sy;
      const double u = c + inv[0] * dx + inv[1] * dy, v = c + inv[2] * dx + inv[3] * dy;
      const auto g = static_cast<std::uint8_t>(std::lround(std::clamp(f(u, v), 0.0, 255.0)));
      for (int ch = 0; ch < 3; ++ch) out.bytes[static_cast<std::size_t>(3 * (y * n + x) + ch)] = g;
    }
  }
  return out;
}

// Where the point at (x, y) of the unmoved texture lies after the same motion.
inline std::array<double, 2> moved(double x, double y, std::array<double, 4> S, double sx, double sy) {
  const double c = (kTextureSide - 1) / 2.0;
  return {c + S[0] * (x - c) + S[1] * (y - c) + sx, c + S[2] * (x - c) + S[3] * (y - c) + sy};
}

}  // namespace edgetap::test
