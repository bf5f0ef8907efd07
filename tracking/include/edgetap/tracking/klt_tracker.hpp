// The `klt` tracker: OpenCV pyramidal Lucas-Kanade with a forward-backward
// check. A point whose backward track misses its start by more than the
// threshold (or that LK cannot follow, or that leaves the frame) is lost.
// The baseline every learned tracker must beat, and the last rung of the ladder.
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

class KltTracker final : public Tracker {
 public:
  explicit KltTracker(const config::KltSettings& settings);

  std::string_view name() const noexcept override { return "klt"; }
  void add_queries(std::span<const Query> queries) override;
  std::size_t remove_queries(std::span<const std::string> ids) override;
  std::size_t size() const noexcept override { return ids_.size(); }
  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override;

 private:
  void track(const std::vector<cv::Mat>& next_pyramid, std::vector<TrackPoint>& out);

  config::KltSettings settings_;
  std::vector<std::string> ids_;
  std::vector<cv::Point2f> points_;   // in the last pushed frame
  std::vector<cv::Mat> pyramid_;      // of the last pushed frame
  int width_ = 0;
  int height_ = 0;
};

}  // namespace edgetap::pipeline
