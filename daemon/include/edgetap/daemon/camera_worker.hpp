// One camera at work: its capture pipeline, its frame queue and a tracking
// thread that tracks each frame and publishes the result. A camera that fails
// stops alone; the others carry on.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/pipeline/capture.hpp"
#include "edgetap/pipeline/frame_queue.hpp"
#include "edgetap/pipeline/publisher.hpp"
#include "edgetap/pipeline/track_session.hpp"

namespace edgetap::daemon {

struct CameraStats {
  std::string name;
  std::string state;              // running | ended | failed | stopped
  std::string error;              // the capture's last error, if any
  std::uint64_t frames_captured = 0;
  std::uint64_t frames_tracked = 0;
  std::uint64_t queue_drops = 0;
  std::uint64_t tracks_lost = 0;
  std::size_t points = 0;         // live tracks after the last frame
  double tracker_ms_mean = 0;
  double latency_ms_mean = 0;     // capture -> publish
  double latency_ms_max = 0;
  double seconds = 0;             // since start
};

// Called on the tracking thread after each frame (for overlays); must be quick.
using FrameObserver = std::function<void(const pipeline::Frame&, const std::vector<TrackPoint>&)>;

class CameraWorker {
 public:
  CameraWorker(const config::CameraConfig& camera, pipeline::Publisher* publisher, FrameObserver observer = {});
  ~CameraWorker();
  CameraWorker(const CameraWorker&) = delete;
  CameraWorker& operator=(const CameraWorker&) = delete;

  // Starts capture and tracking. A pipeline that cannot be built leaves the
  // camera in the failed state (logged) and returns false.
  bool start();
  void stop();
  // The capture has ended or failed and every queued frame is tracked.
  bool finished() const noexcept { return finished_.load(); }
  CameraStats stats() const;
  const std::string& name() const noexcept { return camera_.name; }

 private:
  void track_loop();
  void track_one(const pipeline::Frame& frame, std::vector<TrackPoint>& points);

  const config::CameraConfig camera_;
  std::shared_ptr<spdlog::logger> log_;
  pipeline::Publisher* publisher_;
  FrameObserver observer_;
  pipeline::FrameQueue queue_;
  pipeline::Capture capture_;
  pipeline::TrackSession session_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::chrono::steady_clock::time_point started_;

  mutable std::mutex stats_mutex_;
  CameraStats stats_;
  double tracker_ms_sum_ = 0;
  double latency_ms_sum_ = 0;
};

}  // namespace edgetap::daemon
