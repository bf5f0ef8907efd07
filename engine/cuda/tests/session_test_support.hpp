// Frames and query points shared by the session tests: a moving scene with
// texture everywhere, and a grid of points inside it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::gpu::testing {

// A textured scene sliding by (1.5, -1) px per frame, with a square of its own
// moving the other way: enough texture and motion for the trackers to work.
inline std::vector<std::uint8_t> scene(int width, int height, int t) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float u = static_cast<float>(x) - 1.5f * t, v = static_cast<float>(y) + 1.f * t;
      const bool in_square = std::abs(x - width / 3 - 2 * t) < width / 8 && std::abs(y - height / 2) < height / 8;
      for (int ch = 0; ch < 3; ++ch) {
        float value = 128.f + 60.f * std::sin(0.11f * u + 0.07f * v + ch) + 40.f * std::sin(0.05f * u - 0.13f * v + 2.f * ch) +
                      20.f * std::sin(0.31f * u * 0.7f + 0.23f * v);
        if (in_square) value = 255.f - value * 0.5f;
        rgb[(static_cast<std::size_t>(y) * width + x) * 3 + ch] = static_cast<std::uint8_t>(std::clamp(value, 0.f, 255.f));
      }
    }
  }
  return rgb;
}

inline std::vector<engine::Point2> grid(int width, int height, int n, float offset) {
  std::vector<engine::Point2> points;
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<float>(n))));
  for (int i = 0; i < n; ++i) {
    points.push_back({offset + (width - 2 * offset) * static_cast<float>(i % side) / static_cast<float>(side),
                      offset + (height - 2 * offset) * static_cast<float>(i / side) / static_cast<float>(side)});
  }
  return points;
}

}  // namespace edgetap::gpu::testing
