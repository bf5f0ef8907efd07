// Test fixtures drawn by the tests themselves (no ../shared): smooth random
// textures, cut-outs with alpha mattes, and small generated sequences.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

#include "edgetap/synth/synth_options.hpp"

namespace edgetap::test {

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// RGB8, smooth at the scale of several pixels (random values every 16 pixels,
// cubic upsampling) so bilinear interpolation is accurate and KLT has texture.
// `channel_mask` zeroes channels (for example {0, 1, 1} for a texture with no red).
cv::Mat smooth_texture(int width, int height, std::uint64_t seed, cv::Vec3b channel_mask = {1, 1, 1});

// Writes `count` background PNGs (no red channel) into dir/backgrounds and
// `count` cut-out PNGs (pure red discs with an alpha matte) into dir/cutouts.
void write_fixture_images(const std::filesystem::path& dir, int count);

// Options for a small, gentle sequence set made from write_fixture_images'
// images: no noise, no drift, no blur, PNG frames.
synth::SynthOptions fixture_options(const std::filesystem::path& dir);

}  // namespace edgetap::test
