#include "edgetap/ladder/track_session.hpp"

#include <exception>

namespace edgetap::pipeline {

std::unique_ptr<TrackSession> TrackSession::build(const config::CameraConfig& camera, ModelCache& models,
                                                   std::vector<std::string>& skipped, std::string& error) {
  std::vector<config::Rung> rungs = resolve_ladder(camera, skipped);
  RungTrackerFactory factory = rung_tracker_factory(camera, models);
  if (!check_rungs(camera, rungs, factory, error)) return nullptr;
  std::unique_ptr<LadderedTracker> ladder = LadderedTracker::make(camera, std::move(rungs), std::move(factory), error);
  if (!ladder) return nullptr;
  return std::make_unique<TrackSession>(std::move(ladder), QuerySeeder(camera.queries));
}

TrackSession::TrackSession(std::unique_ptr<LadderedTracker> ladder, QuerySeeder seeder)
    : ladder_(std::move(ladder)), seeder_(std::move(seeder)) {}

bool TrackSession::skips(std::uint64_t frame_index) const noexcept {
  const int stride = ladder_->stride();
  return stride > 1 && frame_index % static_cast<std::uint64_t>(stride) != 0;
}

Status TrackSession::process(const Frame& frame, std::vector<TrackPoint>& out) noexcept {
  Status status = ladder_->push_frame(frame.view(), out);
  if (!status) return status;
  try {
    live_.clear();
    for (const TrackPoint& p : out) {
      if (!p.lost) live_.push_back(p);
    }
    std::vector<Query> seeds = seeder_.seed(frame.view(), frame.source_width, frame.source_height, live_);
    const std::size_t room = ladder_->capacity() > live_.size() ? ladder_->capacity() - live_.size() : 0;
    if (seeds.size() > room) seeds.resize(room);  // a rung's point cap
    ladder_->add_queries(seeds);
    for (const Query& q : seeds) out.push_back({q.id, q.x, q.y, true, 1.f, false});
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("seeding queries: ") + e.what());
  }
}

std::size_t TrackSession::remove_queries(std::span<const std::string> ids) {
  for (const std::string& id : ids) seeder_.retire(id);
  return ladder_->remove_queries(ids);
}

}  // namespace edgetap::pipeline
