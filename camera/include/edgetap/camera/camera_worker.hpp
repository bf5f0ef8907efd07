// One camera at work: its capture pipeline, its frame queue and a tracking
// thread that tracks each frame and publishes the result. Live sources are
// supervised: after an error, an end of stream or a stall the pipeline is
// restarted with exponential backoff and jitter. A camera that fails stops or
// retries alone; the others carry on. Runtime changes to the query points are
// applied on the tracking thread between frames.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/camera/backoff.hpp"
#include "edgetap/camera/camera_stats.hpp"
#include "edgetap/publish/camera_directory.hpp"
#include "edgetap/capture/capture.hpp"
#include "edgetap/capture/frame_queue.hpp"
#include "edgetap/publish/message_sink.hpp"
#include "edgetap/camera/compute_gate.hpp"
#include "edgetap/ladder/track_session.hpp"
#include "edgetap/ladder/latency_governor.hpp"
#include "edgetap/ladder/tracker_factory.hpp"

namespace edgetap::daemon {

// Called on the tracking thread after each frame (for overlays); must be quick.
using FrameObserver = std::function<void(const pipeline::Frame&, const std::vector<TrackPoint>&)>;

// What a runtime change to the query points did.
struct PointsChange {
  std::vector<std::string> applied;   // ids added or removed
  std::vector<std::string> rejected;  // "id: reason"
  std::string error;                  // the whole request failed (e.g. no frame yet)
};

class CameraWorker {
 public:
  // Makes the camera's tracker; when that fails (a bad model file, say) the
  // camera stays failed with the reason while the others run.
  // Cameras running the network on the CPU take turns at `gate` (its BLAS threads).
  // The cameras' governors meet at `peers` (governor_peers.hpp).
  // What runs the rung in force is kept in `directory` (when given; it must
  // outlive the worker) from the start and after every rung change.
  CameraWorker(const config::CameraConfig& camera, pipeline::MessageSink* sink, pipeline::ModelCache& models,
               pipeline::ComputeGate& gate, pipeline::GovernorPeers& peers, FrameObserver observer = {},
               pipeline::CameraDirectory* directory = nullptr);
  ~CameraWorker();
  CameraWorker(const CameraWorker&) = delete;
  CameraWorker& operator=(const CameraWorker&) = delete;

  // Before start(): the tracker pays its first frames' set-up at the camera's
  // model size for the points it starts with (TrackSession::warm_up), so that no
  // frame waits for it once the camera streams; a failure is logged and left to
  // the first frames.
  void warm_up();
  void start();
  void stop();
  // A file source has ended or failed and every queued frame is tracked.
  // Live sources never finish: they are restarted.
  bool finished() const noexcept { return finished_.load(); }
  CameraStats stats() const;
  const config::CameraConfig& config() const noexcept { return camera_; }
  const std::string& name() const noexcept { return camera_.name; }

  // Adds tracks at source-image pixels of the latest frame / removes tracks.
  // Blocks until the tracking thread applied the change (or `timeout`).
  // Points past `max_live` live tracks (counted on the tracking thread, the
  // points just added included) are rejected one by one, with the reason.
  // `on_applied`, when given, is called on the tracking thread with the ids added,
  // also when that happens after `timeout` has been reported to the caller.
  PointsChange add_points(const std::vector<config::ExplicitPoint>& points, std::chrono::milliseconds timeout,
                          std::size_t max_live,
                          std::function<void(const std::vector<std::string>& applied)> on_applied = {});
  PointsChange remove_points(const std::vector<std::string>& ids, std::chrono::milliseconds timeout);
  // Points to add as soon as the first frame is tracked (kept from before a restart
  // or a reload), under the same checks as add_points; call before start().
  // What is added or rejected is logged.
  void restore_points(std::vector<config::ExplicitPoint> points, std::size_t max_live);

 private:
  void track_loop();
  void track_one(const pipeline::Frame& frame, std::vector<TrackPoint>& points);
  void track_and_publish(const pipeline::Frame& frame, std::vector<TrackPoint>& points);
  bool rung_takes_turns() const;
  bool follow_failover(const std::string& when);
  void note_rung_locked();
  void note_engine();
  void supervise();
  void run_control_tasks();
  PointsChange add_points_now(const std::vector<config::ExplicitPoint>& points, std::size_t max_live);
  void add_restored_points();
  PointsChange run_on_tracking_thread(std::function<PointsChange()> task, std::chrono::milliseconds timeout);

  const config::CameraConfig camera_;
  const bool live_;
  std::shared_ptr<spdlog::logger> log_;
  pipeline::MessageSink* sink_;
  FrameObserver observer_;
  const bool queue_overflow_blocks_;  // a file read as fast as possible: no latency budget to keep
  pipeline::FrameQueue queue_;
  pipeline::Capture capture_;
  void govern(double latency_ms);
  // The outcome of the governor's last move, once the new rung took over or could not.
  void follow_switch();

  std::string tracker_error_;
  std::unique_ptr<pipeline::TrackSession> session_;  // null when the tracker could not be made
  std::unique_ptr<pipeline::LatencyGovernor> governor_;
  pipeline::ComputeGate& gate_;
  std::string switch_reason_;  // why the governor asked for the rung being built
  pipeline::ModelCache& models_;
  pipeline::CameraDirectory* directory_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::chrono::steady_clock::time_point started_;

  // Supervision (tracking thread only).
  Backoff backoff_;
  std::int64_t restart_at_ns_ = 0;  // a restart is scheduled when > 0
  std::uint64_t frames_at_restart_ = 0;

  // Tracking-thread state that control tasks read.
  std::unordered_set<std::string> live_ids_;
  int source_width_ = 0;
  int source_height_ = 0;
  int model_width_ = 0;
  int model_height_ = 0;
  std::vector<config::ExplicitPoint> restored_points_;  // added after the first tracked frame
  std::size_t restored_max_live_ = 0;

  std::mutex tasks_mutex_;
  std::vector<std::function<void()>> tasks_;

  mutable std::mutex stats_mutex_;
  CameraStats stats_;
  double tracker_ms_sum_ = 0;
  double latency_ms_sum_ = 0;
};

}  // namespace edgetap::daemon
