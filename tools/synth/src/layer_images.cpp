#include "edgetap/synth/layer_images.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "edgetap/eval/frame_source.hpp"

namespace edgetap::synth {
namespace {

cv::Mat read(const std::filesystem::path& file, int flags) {
  cv::Mat image;
  try {
    image = cv::imread(file.string(), flags);
  } catch (const cv::Exception&) {
    image.release();
  }
  if (image.empty()) throw std::runtime_error(file.string() + ": not a readable image");
  return image;
}

cv::Mat resized_by(const cv::Mat& image, double scale) {
  if (std::abs(scale - 1.0) < 1e-9) return image;
  cv::Mat out;
  cv::resize(image, out, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_CUBIC);
  return out;
}

// A crop of a photo for a procedural cut-out: a random box of 40-70% of the
// shorter side, so different sequences cut different things from one photo.
cv::Mat random_crop(const cv::Mat& image, Random& rng) {
  const int side = std::min(image.cols, image.rows);
  const int w = std::max(8, static_cast<int>(side * rng.uniform(0.4, 0.7)));
  const int h = std::max(8, static_cast<int>(w * rng.uniform(0.7, 1.3)));
  const int cw = std::min(w, image.cols), ch = std::min(h, image.rows);
  const int x = static_cast<int>(rng.below(static_cast<std::uint64_t>(image.cols - cw + 1)));
  const int y = static_cast<int>(rng.below(static_cast<std::uint64_t>(image.rows - ch + 1)));
  return image(cv::Rect(x, y, cw, ch)).clone();
}

}  // namespace

std::vector<std::filesystem::path> list_images(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    } else if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file() && eval::is_image_file(e.path())) files.push_back(e.path());
      }
    } else {
      throw std::runtime_error(p.string() + ": no such image file or folder");
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

cv::Mat load_background(const std::filesystem::path& file, int short_side) {
  const cv::Mat bgr = read(file, cv::IMREAD_COLOR);
  cv::Mat rgb;
  cv::cvtColor(resized_by(bgr, static_cast<double>(short_side) / std::min(bgr.cols, bgr.rows)), rgb,
               cv::COLOR_BGR2RGB);
  cv::Mat out;
  rgb.convertTo(out, CV_32FC3);
  return out;
}

cv::Mat blob_matte(int width, int height, Random& rng) {
  // Radius r(angle) = 1 + a few low harmonics; drawn 4x larger, then shrunk
  // with area averaging for a soft, anti-aliased edge.
  constexpr int kSuper = 4;
  constexpr int kHarmonics = 4;
  double amp[kHarmonics], phase[kHarmonics], amp_sum = 0;
  for (int k = 0; k < kHarmonics; ++k) {
    amp[k] = rng.uniform(0.0, 0.18 / (k + 1));
    phase[k] = rng.uniform(0.0, 2 * std::numbers::pi);
    amp_sum += amp[k];
  }
  std::vector<cv::Point> outline;
  constexpr int kVertices = 180;
  for (int i = 0; i < kVertices; ++i) {
    const double a = 2 * std::numbers::pi * i / kVertices;
    double r = 1.0;
    for (int k = 0; k < kHarmonics; ++k) r += amp[k] * std::cos((k + 2) * a + phase[k]);
    r *= 0.47 / (1.0 + amp_sum);  // the largest possible radius just fits the box
    outline.emplace_back(static_cast<int>(std::lround((0.5 + r * std::cos(a)) * width * kSuper)),
                         static_cast<int>(std::lround((0.5 + r * std::sin(a)) * height * kSuper)));
  }
  cv::Mat big = cv::Mat::zeros(height * kSuper, width * kSuper, CV_8U);
  cv::fillPoly(big, std::vector<std::vector<cv::Point>>{outline}, cv::Scalar(255), cv::LINE_8);
  cv::Mat small, out;
  cv::resize(big, small, cv::Size(width, height), 0, 0, cv::INTER_AREA);
  small.convertTo(out, CV_32F, 1.0 / 255.0);
  return out;
}

cv::Mat load_cutout(const std::filesystem::path& file, int max_side, Random& rng) {
  const cv::Mat image = read(file, cv::IMREAD_UNCHANGED);
  cv::Mat rgb, alpha;
  if (image.channels() == 4) {
    cv::Mat channels[4];
    cv::split(image, channels);
    cv::Mat alpha8 = channels[3].depth() == CV_8U ? channels[3] : cv::Mat();
    if (alpha8.empty()) channels[3].convertTo(alpha8, CV_8U, 1.0 / 256.0);
    const cv::Rect box = cv::boundingRect(alpha8 > 8);
    if (box.area() == 0) throw std::runtime_error(file.string() + ": the alpha matte is empty");
    cv::Mat bgr;
    cv::merge(channels, 3, bgr);
    if (bgr.depth() != CV_8U) bgr.convertTo(bgr, CV_8U, 1.0 / 256.0);
    rgb = bgr(box).clone();
    alpha8(box).convertTo(alpha, CV_32F, 1.0 / 255.0);
  } else {
    const cv::Mat bgr = read(file, cv::IMREAD_COLOR);
    rgb = random_crop(bgr, rng);
    alpha = blob_matte(rgb.cols, rgb.rows, rng);
  }
  const double scale = std::min(1.0, static_cast<double>(max_side) / std::max(rgb.cols, rgb.rows));
  rgb = resized_by(rgb, scale);
  if (alpha.size() != rgb.size()) cv::resize(alpha, alpha, rgb.size(), 0, 0, cv::INTER_AREA);
  cv::cvtColor(rgb, rgb, cv::COLOR_BGR2RGB);
  cv::Mat rgbf;
  rgb.convertTo(rgbf, CV_32FC3);
  cv::Mat planes[3];
  cv::split(rgbf, planes);
  for (cv::Mat& p : planes) p = p.mul(alpha);
  cv::Mat layer;
  cv::merge(std::vector<cv::Mat>{planes[0], planes[1], planes[2], alpha}, layer);
  return layer;
}

}  // namespace edgetap::synth
