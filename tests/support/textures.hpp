// Procedural test imagery: a smooth random texture (good for Lucas-Kanade) and
// crops of it that translate by a known amount per frame.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>

#include "edgetap/capture/frame.hpp"

namespace edgetap::test {

// A BGR texture of blurred random blobs, deterministic for a seed.
cv::Mat random_texture(int width, int height, std::uint64_t seed);

// The crop of `texture` at (x0, y0) of size width x height, as an RGB Frame.
// Content at texture point P appears at P - (x0, y0): moving the crop by
// (+vx, +vy) per frame moves the content by (-vx, -vy).
pipeline::Frame crop_frame(const cv::Mat& texture, int x0, int y0, int width, int height, std::uint64_t index);

// A flat grey square frame, for trackers that do not look at pixels.
struct NetworkLessFrame {
  explicit NetworkLessFrame(int size) : frame(make(size)) {}
  ImageView view() const { return frame.view(); }
  pipeline::Frame frame;

 private:
  static pipeline::Frame make(int size) {
    pipeline::Frame f;
    f.width = f.height = f.source_width = f.source_height = size;
    f.rgb.assign(static_cast<std::size_t>(size) * size * 3, 128);
    return f;
  }
};

}  // namespace edgetap::test
