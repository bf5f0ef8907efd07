#include "edgetap/tracking/track_session.hpp"

#include <exception>

namespace edgetap::pipeline {

TrackSession::TrackSession(std::unique_ptr<Tracker> tracker, QuerySeeder seeder)
    : tracker_(std::move(tracker)), seeder_(std::move(seeder)) {}

Status TrackSession::process(const Frame& frame, std::vector<TrackPoint>& out) noexcept {
  Status status = tracker_->push_frame(frame.view(), out);
  if (!status) return status;
  try {
    live_.clear();
    for (const TrackPoint& p : out) {
      if (!p.lost) live_.push_back(p);
    }
    std::vector<Query> seeds = seeder_.seed(frame.view(), frame.source_width, frame.source_height, live_);
    const std::size_t room = tracker_->capacity() > live_.size() ? tracker_->capacity() - live_.size() : 0;
    if (seeds.size() > room) seeds.resize(room);  // a rung's point cap
    tracker_->add_queries(seeds);
    for (const Query& q : seeds) out.push_back({q.id, q.x, q.y, true, 1.f, false});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("seeding queries: ") + e.what());
  }
}

std::size_t TrackSession::remove_queries(std::span<const std::string> ids) {
  for (const std::string& id : ids) seeder_.retire(id);
  return tracker_->remove_queries(ids);
}

}  // namespace edgetap::pipeline
