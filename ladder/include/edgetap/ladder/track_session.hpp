// A camera's tracking state: its ladder (laddered_tracker.hpp) plus the query
// policy that starts and re-seeds its tracks. The camera's worker talks to
// this alone: frames in, tracks out, the rung in force's stride, and the
// governor's moves along the ladder. Track ids are stable strings; a lost
// track is reported once (lost = true) and its replacement gets a new id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/capture/frame.hpp"
#include "edgetap/ladder/laddered_tracker.hpp"
#include "edgetap/tracking/query_seeder.hpp"

namespace edgetap::pipeline {

class TrackSession {
 public:
  // The one way a camera's tracking is built: its ladder resolved (rungs this
  // process cannot run left out and named in `skipped`), every rung's tracker
  // built once (check_rungs), rung 0 in force and the camera's query policy.
  // Null with `error` when a rung cannot be built.
  static std::unique_ptr<TrackSession> build(const config::CameraConfig& camera, ModelCache& models,
                                             std::vector<std::string>& skipped, std::string& error);

  TrackSession(std::unique_ptr<LadderedTracker> ladder, QuerySeeder seeder);

  // Whether the rung in force skips this frame (its `stride`).
  bool skips(std::uint64_t frame_index) const noexcept;

  // Tracks into `frame` and seeds new queries in it. `out` gets every track
  // for this frame in model pixels: the tracked ones, the lost ones (once),
  // and the ones seeded here.
  Status process(const Frame& frame, std::vector<TrackPoint>& out) noexcept;

  // Adds user queries (model pixels, in the last processed frame); they are not re-seeded when lost.
  void add_queries(std::span<const Query> queries) { ladder_->add_queries(queries); }
  // Removes tracks for good (their grid or explicit slots are not re-seeded). Returns how many existed.
  std::size_t remove_queries(std::span<const std::string> ids);

  // Before the first frame: the rung in force pays the set-up of the points the
  // seeder starts with in width x height frames (Tracker::warm_up).
  Status warm_up(int width, int height) noexcept { return ladder_->warm_up(width, height, seeder_.initial_count()); }

  // The ladder as it stands: the rung in force, its name, the rungs.
  const LadderedTracker& ladder() const noexcept { return *ladder_; }
  // The governor's moves (LadderedTracker::begin_switch and what follows).
  bool begin_switch(int rung, std::string& error) { return ladder_->begin_switch(rung, error); }
  bool switching() const noexcept { return ladder_->switching(); }
  std::optional<LadderedTracker::Switch> take_switch() { return ladder_->take_switch(); }
  std::optional<LadderedTracker::Failover> take_failover() { return ladder_->take_failover(); }

 private:
  std::unique_ptr<LadderedTracker> ladder_;
  QuerySeeder seeder_;
  std::vector<TrackPoint> live_;
};

}  // namespace edgetap::pipeline
