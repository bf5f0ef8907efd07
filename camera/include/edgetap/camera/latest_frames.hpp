// The latest tracked frame of each camera with its tracks, for the live view.
// Kept cheaply: the tracking thread swaps in a shared copy per frame (no
// encoding); a reader takes a reference and encodes only on request.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "edgetap/camera/camera_worker.hpp"

namespace edgetap::daemon {

struct LatestFrame {
  pipeline::Frame frame;           // at model size, with its source size
  std::vector<TrackPoint> points;  // model pixels
};

class LatestFrames {
 public:
  void put(const std::string& camera, const pipeline::Frame& frame, const std::vector<TrackPoint>& points);
  // Null when the camera has tracked no frame yet.
  std::shared_ptr<const LatestFrame> get(const std::string& camera) const;
  // An observer for Runtime that keeps the camera's frames here (`frames` must outlive it).
  static FrameObserver observer(std::shared_ptr<LatestFrames> frames, const std::string& camera);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const LatestFrame>, std::less<>> latest_;
};

}  // namespace edgetap::daemon
