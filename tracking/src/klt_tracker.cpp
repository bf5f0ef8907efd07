#include "edgetap/tracking/klt_tracker.hpp"

#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace edgetap::pipeline {

KltTracker::KltTracker(const config::KltSettings& settings) : settings_(settings) {}

void KltTracker::add_queries(std::span<const Query> queries) {
  for (const Query& q : queries) {
    const auto it = std::find(ids_.begin(), ids_.end(), q.id);
    if (it != ids_.end()) {
      points_[static_cast<std::size_t>(it - ids_.begin())] = {q.x, q.y};
      continue;
    }
    ids_.push_back(q.id);
    points_.emplace_back(q.x, q.y);
  }
}

std::size_t KltTracker::remove_queries(std::span<const std::string> ids) {
  const std::unordered_set<std::string> doomed(ids.begin(), ids.end());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (doomed.count(ids_[i])) continue;
    if (kept != i) {
      ids_[kept] = std::move(ids_[i]);
      points_[kept] = points_[i];
    }
    ++kept;
  }
  const std::size_t removed = ids_.size() - kept;
  ids_.resize(kept);
  points_.resize(kept);
  return removed;
}

Status KltTracker::push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept {
  out.clear();
  if (frame.empty()) return Status::error(Status::Code::bad_frame, "empty frame");
  try {
    const cv::Mat rgb(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.data), frame.stride);
    cv::Mat gray;
    cv::cvtColor(rgb, gray, cv::COLOR_RGB2GRAY);
    const cv::Size window(settings_.window, settings_.window);
    std::vector<cv::Mat> pyramid;
    cv::buildOpticalFlowPyramid(gray, pyramid, window, settings_.levels);
    const bool same_size = frame.width == width_ && frame.height == height_;
    if (pyramid_.empty() || !same_size) {
      // First frame (or a new size): the queries are located in this frame.
      for (std::size_t i = 0; i < ids_.size(); ++i) {
        out.push_back({ids_[i], points_[i].x, points_[i].y, true, 1.f, false});
      }
    } else {
      track(pyramid, out);
    }
    pyramid_ = std::move(pyramid);
    width_ = frame.width;
    height_ = frame.height;
    return Status::ok();
  } catch (const cv::Exception& e) {
    return Status::error(Status::Code::internal, std::string("klt: ") + e.what());
  }
}

void KltTracker::track(const std::vector<cv::Mat>& next_pyramid, std::vector<TrackPoint>& out) {
  if (ids_.empty()) return;
  const cv::Size window(settings_.window, settings_.window);
  const cv::TermCriteria stop(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
  std::vector<cv::Point2f> forward, backward;
  std::vector<unsigned char> ok_forward, ok_backward;
  std::vector<float> error;
  cv::calcOpticalFlowPyrLK(pyramid_, next_pyramid, points_, forward, ok_forward, error, window, settings_.levels,
                           stop);
  backward = points_;
  cv::calcOpticalFlowPyrLK(next_pyramid, pyramid_, forward, backward, ok_backward, error, window,
                           settings_.levels, stop, cv::OPTFLOW_USE_INITIAL_FLOW);

  const float threshold = static_cast<float>(settings_.fb_threshold);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    const cv::Point2f p = forward[i];
    const float fb = static_cast<float>(cv::norm(backward[i] - points_[i]));
    const bool inside = p.x >= 0.f && p.y >= 0.f && p.x <= static_cast<float>(width_ - 1) &&
                        p.y <= static_cast<float>(height_ - 1);
    const bool tracked = ok_forward[i] && ok_backward[i] && inside && std::isfinite(fb) && fb <= threshold;
    if (!tracked) {
      out.push_back({ids_[i], points_[i].x, points_[i].y, false, 0.f, true});
      continue;
    }
    out.push_back({ids_[i], p.x, p.y, true, std::clamp(1.f - fb / threshold, 0.f, 1.f), false});
    if (kept != i) ids_[kept] = std::move(ids_[i]);
    points_[kept] = p;
    ++kept;
  }
  ids_.resize(kept);
  points_.resize(kept);
}

}  // namespace edgetap::pipeline
