#include "edgetap/camera/latest_frames.hpp"

namespace edgetap::daemon {

void LatestFrames::put(const std::string& camera, const pipeline::Frame& frame,
                       const std::vector<TrackPoint>& points) {
  auto latest = std::make_shared<const LatestFrame>(LatestFrame{frame, points});  // copied outside the lock
  std::lock_guard lock(mutex_);
  latest_[camera] = std::move(latest);
}

std::shared_ptr<const LatestFrame> LatestFrames::get(const std::string& camera) const {
  std::lock_guard lock(mutex_);
  const auto it = latest_.find(camera);
  return it == latest_.end() ? nullptr : it->second;
}

FrameObserver LatestFrames::observer(std::shared_ptr<LatestFrames> frames, const std::string& camera) {
  return [frames = std::move(frames), camera](const pipeline::Frame& frame, const std::vector<TrackPoint>& points) {
    frames->put(camera, frame, points);
  };
}

}  // namespace edgetap::daemon
