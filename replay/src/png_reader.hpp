// Decoding a trace's frames: 8-bit RGB PNGs, through libpng's simplified API.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "edgetap/image.hpp"

namespace edgetap::replay {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // rows of 3 * width bytes

  ImageView view() const noexcept {
    return {pixels.data(), width, height, static_cast<std::size_t>(width) * 3};
  }
};

// Any PNG libpng reads, converted to 8-bit RGB. Throws std::runtime_error
// naming the file and libpng's reason.
RgbImage read_png_rgb(const std::filesystem::path& file);

}  // namespace edgetap::replay
