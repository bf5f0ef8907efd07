// A non-owning view of an 8-bit RGB image (row-major, 3 bytes per pixel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgetap {

struct ImageView {
  const std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::size_t stride = 0;  // bytes from one row to the next (>= 3 * width)

  bool empty() const noexcept { return data == nullptr || width <= 0 || height <= 0; }
  const std::uint8_t* row(int y) const noexcept { return data + static_cast<std::size_t>(y) * stride; }
  // Bytes of the image with its rows packed (no padding).
  std::size_t packed_bytes() const noexcept {
    return static_cast<std::size_t>(width) * 3 * static_cast<std::size_t>(height);
  }
};

// Copies the image's rows to `to`, packed (3 * width bytes a row, packed_bytes() in all).
inline void copy_rows_packed(const ImageView& image, std::uint8_t* to) {
  const std::size_t row = static_cast<std::size_t>(image.width) * 3;
  for (int y = 0; y < image.height; ++y) std::memcpy(to + row * static_cast<std::size_t>(y), image.row(y), row);
}

}  // namespace edgetap
