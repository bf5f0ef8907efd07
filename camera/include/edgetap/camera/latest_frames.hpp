// The latest tracked frame of each camera with its tracks, for the live view.
// Kept cheaply: the tracking thread swaps in a shared copy (no encoding) of
// every frame while someone watches the camera (a request within the last
// kWatchedFor), else of one frame per kUnwatchedEvery; a reader takes a
// reference and encodes only on request.
#pragma once

#include <chrono>
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
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kWatchedFor{10};
  static constexpr std::chrono::seconds kUnwatchedEvery{1};

  explicit LatestFrames(Clock::duration unwatched_every = kUnwatchedEvery) : unwatched_every_(unwatched_every) {}
  void put(const std::string& camera, const pipeline::Frame& frame, const std::vector<TrackPoint>& points);
  // Null when the camera has tracked no frame yet. Marks the camera watched.
  std::shared_ptr<const LatestFrame> get(const std::string& camera) const;
  // An observer for Runtime that keeps the camera's frames here (`frames` must outlive it).
  static FrameObserver observer(std::shared_ptr<LatestFrames> frames, const std::string& camera);

 private:
  struct Kept {
    std::shared_ptr<const LatestFrame> latest;
    Clock::time_point kept_at{};
    Clock::time_point watched_until{};  // a request marks the camera watched until then
  };
  const Clock::duration unwatched_every_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Kept, std::less<>> kept_;
};

}  // namespace edgetap::daemon
