// A captured frame at model size, with where and when it came from.
#pragma once

#include <cstdint>
#include <vector>

#include "edgetap/image.hpp"

namespace edgetap::pipeline {

struct Frame {
  std::vector<std::uint8_t> rgb;  // packed RGB8, width * height * 3 bytes
  int width = 0;                  // model size
  int height = 0;
  int source_width = 0;           // the decoded image before scaling
  int source_height = 0;
  std::uint64_t index = 0;        // capture order, from 0; gaps mean dropped frames
  std::int64_t capture_unix_us = 0;   // wall clock when the frame left the decoder
  std::int64_t capture_steady_ns = 0; // the same instant on the monotonic clock (latency)
  std::int64_t pts_ns = -1;           // media timestamp, -1 when unknown

  ImageView view() const noexcept {
    return {rgb.data(), width, height, static_cast<std::size_t>(width) * 3};
  }
};

}  // namespace edgetap::pipeline
