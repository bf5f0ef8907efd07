#pragma once

// Pixel-centre geometry shared by every stage that maps coordinates between
// image sizes. Pixel i covers [i, i + 1) and its centre is at integer i, so a
// coordinate v of an image scaled by s (new size / old size) is
// (v + 0.5) * s - 0.5 in the scaled image.

namespace edgetap {

template <class T>
constexpr T rescale_pixel(T v, T scale) {
  return (v + T(0.5)) * scale - T(0.5);
}

// The centre of cell i of n equal cells across an extent of pixels.
template <class T>
constexpr T cell_centre(int i, int n, T extent) {
  return rescale_pixel(static_cast<T>(i), extent / static_cast<T>(n));
}

}  // namespace edgetap
