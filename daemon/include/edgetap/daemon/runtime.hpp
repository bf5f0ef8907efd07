// Everything a configuration runs: the track socket, the MQTT bridge (when
// enabled) and one worker per camera. Start-up is ordered (outputs, then
// cameras) and teardown is its reverse.
// apply() swaps in a new, already validated configuration: unchanged cameras
// keep running without a gap, changed ones restart, removed ones stop and new
// ones start.
// Points added at run time are kept in control.state_file (when set, see
// points_state.hpp): every camera a start or a reload makes re-adds its own.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/camera/camera_worker.hpp"
#include "edgetap/daemon/health.hpp"
#include "edgetap/daemon/points_state.hpp"
#include "edgetap/publish/output_router.hpp"
#include "edgetap/publish/mqtt_bridge.hpp"
#include "edgetap/publish/publisher.hpp"

namespace edgetap::daemon {

struct ReloadSummary {
  std::vector<std::string> kept, restarted, stopped, started;
  bool publisher_restarted = false;
  bool mqtt_restarted = false;
  std::string to_string() const;
};

class Runtime {
 public:
  // Makes the observer for a camera (may return an empty function).
  using ObserverFactory = std::function<FrameObserver(const config::CameraConfig&)>;

  explicit Runtime(config::Config config, ObserverFactory observers = {});
  ~Runtime();

  // Opens the track socket, starts the MQTT bridge and every camera. Returns
  // false only when the socket or the bridge cannot be set up; a camera whose
  // source fails is logged and reported in stats while the others run.
  bool start(std::string& error);
  void stop();
  // Swaps in `next` (see above). Returns false, keeping the running
  // configuration, only when a changed track socket or bridge cannot be set up.
  bool apply(config::Config next, ReloadSummary& summary, std::string& error);

  // Every camera has finished (its file ended or failed).
  bool all_finished() const;
  std::vector<CameraStats> stats() const;
  pipeline::PublisherStats publisher_stats() const;
  Snapshot snapshot() const;
  // Sends `json` as the retained MQTT stats message where the bridge is enabled.
  void publish_mqtt_stats(const std::string& json);
  config::Config config() const;
  // The cameras and what runs each (the track socket's hello reads it).
  const pipeline::CameraDirectory& directory() const noexcept { return directory_; }
  // The configuration's control.max_* (what one control request may do).
  config::ControlLimits control_limits() const;
  // Runs `action` on the named camera under the runtime's lock; false when there is none.
  bool with_camera(const std::string& name, const std::function<void(CameraWorker&)>& action);
  // The points added at run time, by camera (the control requests record their changes).
  PointsState& points_state() noexcept { return points_state_; }

 private:
  std::unique_ptr<CameraWorker> make_worker(const config::CameraConfig& camera, const config::ControlLimits& limits);
  // Opens what `next` needs of the track socket and MQTT bridge (`first`: all of it).
  bool swap_outputs(const config::Config& next, bool first, ReloadSummary& summary, std::string& error);

  mutable std::mutex mutex_;
  config::Config config_;
  ObserverFactory observers_;
  pipeline::CameraDirectory directory_;  // outlives the publisher and the workers that use it
  OutputRouter router_;  // what every camera publishes to; outlives the outputs it routes to
  pipeline::ModelCache models_;  // networks shared by the cameras that use them
  pipeline::ComputeGate gate_;   // the cameras' turns at the compute device
  pipeline::GovernorPeers governor_peers_;  // one rung change at a time, process-wide
  PointsState points_state_;
  std::unique_ptr<pipeline::Publisher> publisher_;
  std::unique_ptr<pipeline::MqttBridge> mqtt_;
  std::vector<std::unique_ptr<CameraWorker>> workers_;
};

// A fixed-width table of per-camera statistics, for terminals and logs.
std::string format_summary(const std::vector<CameraStats>& stats);

}  // namespace edgetap::daemon
