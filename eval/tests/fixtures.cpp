#include "fixtures.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <atomic>
#include <stdexcept>
#include <unistd.h>

namespace edgetap::test {

TempDir::TempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("edgetap-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

cv::Mat smooth_texture(int width, int height, std::uint64_t seed, cv::Vec3b channel_mask) {
  cv::RNG rng(seed);
  constexpr int kCell = 16;  // pixels per random value: smooth enough for bilinear sampling to be accurate
  cv::Mat coarse((height + kCell - 1) / kCell, (width + kCell - 1) / kCell, CV_32FC3);
  rng.fill(coarse, cv::RNG::UNIFORM, 20.0, 235.0);
  cv::Mat fine;
  cv::resize(coarse, fine, cv::Size(width, height), 0, 0, cv::INTER_CUBIC);
  cv::Mat out;
  fine.convertTo(out, CV_8UC3);
  for (int y = 0; y < out.rows; ++y) {
    for (int x = 0; x < out.cols; ++x) {
      cv::Vec3b& p = out.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) p[c] = channel_mask[c] ? p[c] : 0;
    }
  }
  return out;
}

void write_fixture_images(const std::filesystem::path& dir, int count) {
  std::filesystem::create_directories(dir / "backgrounds");
  std::filesystem::create_directories(dir / "cutouts");
  for (int i = 0; i < count; ++i) {
    // RGB order {0, 1, 1}: no red. imwrite wants BGR.
    cv::Mat rgb = smooth_texture(640, 480, 100 + static_cast<std::uint64_t>(i), {0, 1, 1});
    cv::Mat bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    if (!cv::imwrite((dir / "backgrounds" / ("bg" + std::to_string(i) + ".png")).string(), bgr)) {
      throw std::runtime_error("cannot write fixture background");
    }
    // A red ellipse with a hard-ish matte on a transparent square.
    cv::Mat bgra(120, 160, CV_8UC4, cv::Scalar(0, 0, 0, 0));
    cv::ellipse(bgra, {80, 60}, {70 - 5 * i, 50}, 15.0 * i, 0, 360, cv::Scalar(0, 0, 255, 255), cv::FILLED, cv::LINE_AA);
    if (!cv::imwrite((dir / "cutouts" / ("cut" + std::to_string(i) + ".png")).string(), bgra)) {
      throw std::runtime_error("cannot write fixture cut-out");
    }
  }
}

synth::SynthOptions fixture_options(const std::filesystem::path& dir) {
  synth::SynthOptions o;
  o.width = 160;
  o.height = 128;
  o.frames = 12;
  o.points = 40;
  o.sequences = 2;
  o.seed = 7;
  o.noise = 0;
  o.drift = 0;
  o.blur_samples = 1;
  o.format = "png";
  o.backgrounds = {dir / "backgrounds"};
  o.cutouts = {dir / "cutouts"};
  return o;
}

}  // namespace edgetap::test
