// A camera's tracking state: one Tracker plus the query policy that starts and
// re-seeds its tracks. Track ids are stable strings; a lost track is reported
// once (lost = true) and its replacement gets a new id.
#pragma once

#include <memory>
#include <vector>

#include "edgetap/capture/frame.hpp"
#include "edgetap/tracking/query_seeder.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

class TrackSession {
 public:
  TrackSession(std::unique_ptr<Tracker> tracker, QuerySeeder seeder);

  // Tracks into `frame` and seeds new queries in it. `out` gets every track
  // for this frame in model pixels: the tracked ones, the lost ones (once),
  // and the ones seeded here.
  Status process(const Frame& frame, std::vector<TrackPoint>& out) noexcept;

  // Adds user queries (model pixels, in the last processed frame); they are not re-seeded when lost.
  void add_queries(std::span<const Query> queries) { tracker_->add_queries(queries); }
  // Removes tracks for good (their grid or explicit slots are not re-seeded). Returns how many existed.
  std::size_t remove_queries(std::span<const std::string> ids);

  // Before the first frame: the tracker pays the set-up of the points the seeder
  // starts with in width x height frames (Tracker::warm_up).
  Status warm_up(int width, int height) noexcept { return tracker_->warm_up(width, height, seeder_.initial_count()); }

  Tracker& tracker() noexcept { return *tracker_; }

 private:
  std::unique_ptr<Tracker> tracker_;
  QuerySeeder seeder_;
  std::vector<TrackPoint> live_;
};

}  // namespace edgetap::pipeline
