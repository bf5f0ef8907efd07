#include "edgetap/tracking/track_strip.hpp"
#include "edgetap/pixel_scale.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "edgetap/tracking/track_overlay.hpp"

namespace edgetap::pipeline {
namespace {

constexpr int kScale = 2;  // panels are drawn at twice the model size

}  // namespace

TrackStrip::TrackStrip(std::size_t max_panels, int trail_length)
    : max_panels_(max_panels), trail_length_(trail_length) {}

void TrackStrip::add(const Frame& frame, const std::vector<TrackPoint>& points) {
  for (const TrackPoint& p : points) {
    if (p.lost) {
      trails_.erase(p.id);
      continue;
    }
    auto& trail = trails_[p.id];
    trail.emplace_back(p.x, p.y);
    if (static_cast<int>(trail.size()) > trail_length_) trail.pop_front();
  }
  if (seen_++ % stride_ != 0) return;
  if (panels_.size() == max_panels_) {
    // Keep every other panel and sample half as often from now on.
    std::vector<cv::Mat> kept;
    for (std::size_t i = 0; i < panels_.size(); i += 2) kept.push_back(panels_[i]);
    panels_ = std::move(kept);
    stride_ *= 2;
    if ((seen_ - 1) % stride_ != 0) return;
  }
  panels_.push_back(draw(frame, points));
}

cv::Mat TrackStrip::draw(const Frame& frame, const std::vector<TrackPoint>& points) const {
  const cv::Mat rgb(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.rgb.data()));
  cv::Mat panel;
  cv::cvtColor(rgb, panel, cv::COLOR_RGB2BGR);
  cv::resize(panel, panel, {}, kScale, kScale, cv::INTER_LINEAR);
  auto at = [](cv::Point2f p) {
    return cv::Point(cvRound(rescale_pixel<float>(p.x, kScale)), cvRound(rescale_pixel<float>(p.y, kScale)));
  };
  for (const TrackPoint& p : points) {
    const cv::Scalar colour = track_colour(p.id);
    if (const auto it = trails_.find(p.id); it != trails_.end()) {
      for (std::size_t i = 1; i < it->second.size(); ++i) {
        cv::line(panel, at(it->second[i - 1]), at(it->second[i]), colour, 1, cv::LINE_AA);
      }
    }
    draw_track(panel, at({p.x, p.y}), p, 3);
  }
  cv::putText(panel, "frame " + std::to_string(frame.index), {6, 18}, cv::FONT_HERSHEY_SIMPLEX, 0.5,
              {255, 255, 255}, 1, cv::LINE_AA);
  return panel;
}

bool TrackStrip::write_png(const std::string& path, std::string& error) const {
  if (panels_.empty()) {
    error = "no frames were tracked";
    return false;
  }
  const std::size_t columns = panels_.size() > 4 ? (panels_.size() + 1) / 2 : panels_.size();
  std::vector<cv::Mat> rows;
  for (std::size_t start = 0; start < panels_.size(); start += columns) {
    std::vector<cv::Mat> row(panels_.begin() + static_cast<std::ptrdiff_t>(start),
                             panels_.begin() + static_cast<std::ptrdiff_t>(std::min(start + columns, panels_.size())));
    while (row.size() < columns) row.push_back(cv::Mat::zeros(panels_[0].size(), panels_[0].type()));
    cv::Mat joined;
    cv::hconcat(row, joined);
    rows.push_back(joined);
  }
  cv::Mat strip;
  cv::vconcat(rows, strip);
  try {
    if (cv::imwrite(path, strip)) return true;
    error = "cannot write " + path;
  } catch (const cv::Exception& e) {
    error = "cannot write " + path + ": " + e.what();
  }
  return false;
}

}  // namespace edgetap::pipeline
