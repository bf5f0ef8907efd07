// Everything a configuration runs: the track socket and one worker per camera.
// Start-up is ordered (socket, then cameras) and teardown is its reverse.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/daemon/camera_worker.hpp"
#include "edgetap/pipeline/publisher.hpp"

namespace edgetap::daemon {

class Runtime {
 public:
  // Makes the observer for a camera (may return an empty function).
  using ObserverFactory = std::function<FrameObserver(const config::CameraConfig&)>;

  explicit Runtime(config::Config config, ObserverFactory observers = {});
  ~Runtime();

  // Opens the track socket and starts every camera. Returns false only when
  // the socket cannot be opened; a camera that fails to start is logged and
  // reported in stats while the others run.
  bool start(std::string& error);
  void stop();

  // Every camera has finished (its source ended or failed).
  bool all_finished() const;
  std::vector<CameraStats> stats() const;
  pipeline::PublisherStats publisher_stats() const { return publisher_.stats(); }
  const config::Config& config() const noexcept { return config_; }

 private:
  config::Config config_;
  ObserverFactory observers_;
  pipeline::Publisher publisher_;
  std::vector<std::unique_ptr<CameraWorker>> workers_;
};

// A fixed-width table of per-camera statistics, for terminals and logs.
std::string format_summary(const std::vector<CameraStats>& stats);

}  // namespace edgetap::daemon
