// A non-owning view of an 8-bit RGB image (row-major, 3 bytes per pixel).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgetap {

struct ImageView {
  const std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::size_t stride = 0;  // bytes from one row to the next (>= 3 * width)

  bool empty() const noexcept { return data == nullptr || width <= 0 || height <= 0; }
  const std::uint8_t* row(int y) const noexcept { return data + static_cast<std::size_t>(y) * stride; }
};

}  // namespace edgetap
