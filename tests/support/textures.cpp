#include "support/textures.hpp"

#include <opencv2/imgproc.hpp>

namespace edgetap::test {

cv::Mat random_texture(int width, int height, std::uint64_t seed) {
  cv::RNG rng(seed);
  cv::Mat noise(height, width, CV_32FC3);
  rng.fill(noise, cv::RNG::NORMAL, 0.0, 1.0);
  cv::GaussianBlur(noise, noise, {0, 0}, 2.5);
  cv::Mat texture;
  cv::normalize(noise, noise, 0, 255, cv::NORM_MINMAX);
  noise.convertTo(texture, CV_8UC3);
  return texture;
}

pipeline::Frame crop_frame(const cv::Mat& texture, int x0, int y0, int width, int height, std::uint64_t index) {
  cv::Mat rgb;
  cv::cvtColor(texture(cv::Rect(x0, y0, width, height)), rgb, cv::COLOR_BGR2RGB);
  pipeline::Frame frame;
  frame.width = frame.source_width = width;
  frame.height = frame.source_height = height;
  frame.index = index;
  frame.rgb.assign(rgb.data, rgb.data + rgb.total() * 3);
  return frame;
}

}  // namespace edgetap::test
