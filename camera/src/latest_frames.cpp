#include "edgetap/camera/latest_frames.hpp"

namespace edgetap::daemon {

void LatestFrames::put(const std::string& camera, const pipeline::Frame& frame,
                       const std::vector<TrackPoint>& points) {
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard lock(mutex_);
    const auto it = kept_.find(camera);
    if (it != kept_.end() && now >= it->second.watched_until && now - it->second.kept_at < unwatched_every_) return;
  }
  auto latest = std::make_shared<const LatestFrame>(LatestFrame{frame, points});  // copied outside the lock
  std::lock_guard lock(mutex_);
  Kept& kept = kept_[camera];
  kept.latest = std::move(latest);
  kept.kept_at = now;
}

std::shared_ptr<const LatestFrame> LatestFrames::get(const std::string& camera) const {
  std::lock_guard lock(mutex_);
  const auto it = kept_.find(camera);
  if (it == kept_.end()) return nullptr;
  it->second.watched_until = Clock::now() + kWatchedFor;
  return it->second.latest;
}

FrameObserver LatestFrames::observer(std::shared_ptr<LatestFrames> frames, const std::string& camera) {
  return [frames = std::move(frames), camera](const pipeline::Frame& frame, const std::vector<TrackPoint>& points) {
    frames->put(camera, frame, points);
  };
}

}  // namespace edgetap::daemon
