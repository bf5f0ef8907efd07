#include "edgetap/tracking/query_seeder.hpp"
#include "edgetap/pixel_scale.hpp"

#include <opencv2/imgproc.hpp>

#include <unordered_set>

namespace edgetap::pipeline {

QuerySeeder::QuerySeeder(const config::QuerySettings& settings) : settings_(settings) {}

void QuerySeeder::make_slots(const ImageView& frame, int source_width, int source_height) {
  using config::QueryPolicy;
  if (settings_.policy == QueryPolicy::grid) {
    for (int row = 0; row < settings_.grid_rows; ++row) {
      for (int col = 0; col < settings_.grid_cols; ++col) {
        Slot slot;
        slot.base = "g" + std::to_string(row) + "x" + std::to_string(col);
        slot.x = cell_centre(col, settings_.grid_cols, static_cast<float>(frame.width));
        slot.y = cell_centre(row, settings_.grid_rows, static_cast<float>(frame.height));
        slots_.push_back(slot);
      }
    }
  } else if (settings_.policy == QueryPolicy::points) {
    // Source pixel centres map to model pixel centres.
    const double sx = static_cast<double>(frame.width) / source_width;
    const double sy = static_cast<double>(frame.height) / source_height;
    for (const config::ExplicitPoint& p : settings_.points) {
      Slot slot;
      slot.base = p.id;
      slot.x = static_cast<float>(rescale_pixel(p.x, sx));
      slot.y = static_cast<float>(rescale_pixel(p.y, sy));
      slots_.push_back(slot);
    }
  }
  slots_made_ = true;
}

std::vector<Query> QuerySeeder::seed(const ImageView& frame, int source_width, int source_height,
                                     std::span<const TrackPoint> live) {
  if (seeded_once_ && !settings_.reseed) return {};
  seeded_once_ = true;
  if (settings_.policy == config::QueryPolicy::features) return seed_features(frame, live);
  if (!slots_made_) make_slots(frame, source_width, source_height);
  return seed_slots(live);
}

std::size_t QuerySeeder::initial_count() const noexcept {
  switch (settings_.policy) {
    case config::QueryPolicy::grid:
      return static_cast<std::size_t>(settings_.grid_cols) * static_cast<std::size_t>(settings_.grid_rows);
    case config::QueryPolicy::features:
      return static_cast<std::size_t>(settings_.feature_count);
    case config::QueryPolicy::points:
      return settings_.points.size();
  }
  return 0;
}

void QuerySeeder::retire(const std::string& id) {
  for (Slot& slot : slots_) {
    if (slot.current == id) slot.retired = true;
  }
}

std::vector<Query> QuerySeeder::seed_slots(std::span<const TrackPoint> live) {
  std::unordered_set<std::string> alive;
  for (const TrackPoint& p : live) alive.insert(p.id);
  std::vector<Query> queries;
  for (Slot& slot : slots_) {
    if (slot.retired || (!slot.current.empty() && alive.count(slot.current))) continue;
    slot.current = slot.generation == 0 ? slot.base : slot.base + "." + std::to_string(slot.generation);
    ++slot.generation;
    queries.push_back({slot.current, slot.x, slot.y});
  }
  return queries;
}

std::vector<Query> QuerySeeder::seed_features(const ImageView& frame, std::span<const TrackPoint> live) {
  const int wanted = settings_.feature_count - static_cast<int>(live.size());
  // Top up only when a meaningful share is missing: detection is the costly part.
  if (wanted <= 0 || (wanted < settings_.feature_count / 8 && !live.empty())) return {};
  const cv::Mat rgb(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.data), frame.stride);
  cv::Mat gray;
  cv::cvtColor(rgb, gray, cv::COLOR_RGB2GRAY);
  cv::Mat mask(gray.size(), CV_8U, cv::Scalar(255));
  const int radius = static_cast<int>(settings_.feature_min_distance);
  for (const TrackPoint& p : live) cv::circle(mask, {cvRound(p.x), cvRound(p.y)}, radius, cv::Scalar(0), -1);
  std::vector<cv::Point2f> corners;
  cv::goodFeaturesToTrack(gray, corners, wanted, 0.01, settings_.feature_min_distance, mask);
  std::vector<Query> queries;
  for (const cv::Point2f& c : corners) queries.push_back({"f" + std::to_string(next_feature_++), c.x, c.y});
  return queries;
}

}  // namespace edgetap::pipeline
