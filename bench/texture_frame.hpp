// The benchmarks' frames: a procedural texture drifting (2, 1) px per frame.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace edgetap::bench {

inline std::vector<std::uint8_t> texture_frame(int width, int height, int t) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const float u = static_cast<float>(x + 2 * t), v = static_cast<float>(y + t);
      for (int c = 0; c < 3; ++c) {
        const float fc = static_cast<float>(c);
        const float value = 128.f + 60.f * std::sin(0.11f * u + 1.3f * fc) * std::cos(0.07f * v - 0.5f * fc) +
                            40.f * std::sin(0.031f * (u + v) + fc);
        rgb[(static_cast<std::size_t>(y) * width + x) * 3 + c] = static_cast<std::uint8_t>(std::clamp(value, 0.f, 255.f));
      }
    }
  return rgb;
}

}  // namespace edgetap::bench
