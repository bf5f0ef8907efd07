#include "edgetap/tracking/track_overlay.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <functional>

#include "edgetap/pixel_scale.hpp"
#include "jpeg_encoder.hpp"

namespace edgetap::pipeline {
namespace {

constexpr int kJpegQuality = 85;
// Marker radius in source pixels: 1/160 of the width, so that markers stay visible on large frames.
constexpr int kRadiusDivisor = 160;
constexpr int kMinRadius = 3;

}  // namespace

cv::Scalar track_colour(const std::string& id) {
  const std::size_t h = std::hash<std::string>{}(id);
  cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar(static_cast<double>(h % 180), 220, 255)), bgr;
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
  const cv::Vec3b c = bgr.at<cv::Vec3b>(0, 0);
  return {static_cast<double>(c[0]), static_cast<double>(c[1]), static_cast<double>(c[2])};
}

void draw_track(cv::Mat& bgr, cv::Point centre, const TrackPoint& point, int radius) {
  if (point.lost) {
    cv::drawMarker(bgr, centre, {0, 0, 255}, cv::MARKER_TILTED_CROSS, 2 * radius + 1, 1);
  } else {
    cv::circle(bgr, centre, radius, track_colour(point.id), point.visible ? -1 : 1, cv::LINE_AA);
  }
}

std::vector<std::uint8_t> snapshot_jpeg(const Frame& frame, const std::vector<TrackPoint>* points) {
  const cv::Mat rgb(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.rgb.data()));
  cv::Mat image;
  cv::cvtColor(rgb, image, cv::COLOR_RGB2BGR);
  const int width = frame.source_width > 0 ? frame.source_width : frame.width;
  const int height = frame.source_height > 0 ? frame.source_height : frame.height;
  if (width != frame.width || height != frame.height) cv::resize(image, image, {width, height}, 0, 0, cv::INTER_LINEAR);
  if (points != nullptr) {
    // Model pixel centres map to source pixel centres, as in the track messages.
    const double sx = static_cast<double>(width) / frame.width;
    const double sy = static_cast<double>(height) / frame.height;
    const int radius = std::max(kMinRadius, width / kRadiusDivisor);
    for (const TrackPoint& p : *points) {
      const cv::Point centre(cvRound(rescale_pixel<double>(p.x, sx)), cvRound(rescale_pixel<double>(p.y, sy)));
      draw_track(image, centre, p, radius);
    }
  }
  return encode_jpeg(image, kJpegQuality);
}

}  // namespace edgetap::pipeline
