// An annotated image strip of a camera's tracks: panels sampled evenly over
// the whole run (the sampling stride doubles whenever the panels fill up), each
// showing the frame with every track's recent trail. Written as PNG.
#pragma once

#include <opencv2/core.hpp>

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "edgetap/capture/frame.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

class TrackStrip {
 public:
  explicit TrackStrip(std::size_t max_panels = 8, int trail_length = 12);

  void add(const Frame& frame, const std::vector<TrackPoint>& points);
  // Writes the panels side by side (two rows when there are more than four).
  bool write_png(const std::string& path, std::string& error) const;
  std::size_t panels() const noexcept { return panels_.size(); }

 private:
  cv::Mat draw(const Frame& frame, const std::vector<TrackPoint>& points) const;

  std::size_t max_panels_;
  int trail_length_;
  std::uint64_t stride_ = 1;
  std::uint64_t seen_ = 0;
  std::unordered_map<std::string, std::deque<cv::Point2f>> trails_;
  std::vector<cv::Mat> panels_;
};

}  // namespace edgetap::pipeline
