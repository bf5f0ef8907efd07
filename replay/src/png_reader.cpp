#include "png_reader.hpp"

#include <png.h>

#include <stdexcept>
#include <string>

namespace edgetap::replay {
namespace {

constexpr png_uint_32 kMaxSide = 65536;

// Frees libpng's state however the read ends.
struct ImageGuard {
  png_image& image;
  ~ImageGuard() { png_image_free(&image); }
};

}  // namespace

RgbImage read_png_rgb(const std::filesystem::path& file) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ImageGuard guard{image};
  if (!png_image_begin_read_from_file(&image, file.c_str())) {
    throw std::runtime_error(file.string() + ": cannot read the PNG: " + image.message);
  }
  if (image.width == 0 || image.height == 0 || image.width > kMaxSide || image.height > kMaxSide) {
    throw std::runtime_error(file.string() + ": PNG of unsupported size " + std::to_string(image.width) + "x" +
                             std::to_string(image.height));
  }
  image.format = PNG_FORMAT_RGB;
  RgbImage out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    throw std::runtime_error(file.string() + ": cannot decode the PNG: " + image.message);
  }
  return out;
}

}  // namespace edgetap::replay
