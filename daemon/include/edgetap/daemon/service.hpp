// edgetapd's lifecycle: load the configuration, start the runtime, the control
// socket and the metrics endpoint (with the live view), tell systemd READY, then serve until
// SIGINT/SIGTERM, pinging the watchdog and reloading on SIGHUP. Teardown is
// the reverse of start-up.
#pragma once

#include <memory>
#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/daemon/control_server.hpp"
#include "edgetap/camera/latest_frames.hpp"
#include "edgetap/daemon/metrics_server.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/daemon/signals.hpp"
#include "edgetap/daemon/socket_paths.hpp"
#include "edgetap/daemon/systemd_notify.hpp"

namespace edgetap::daemon {

class Service {
 public:
  // `signals` must have been created before any thread started; `sockets` win over
  // the file's socket paths at start and on every reload.
  Service(std::string config_path, int stats_every_s, SignalWaiter& signals, SocketOverrides sockets = {});
  ~Service();

  // Returns the process exit status.
  int run();

 private:
  // Moves the control socket and the metrics endpoint to `config`'s settings.
  // A new path or port is opened before the old one closes; on the same path
  // or port the old one closes first and is reopened if the new one fails.
  // Either way an endpoint that fails keeps serving with its old settings
  // (and a later reload tries again). Returns false with what failed.
  bool start_endpoints(const config::Config& config, std::string& error);
  bool swap_control(const config::ControlConfig& next, std::string& error);
  bool swap_metrics(const config::MetricsConfig& next, std::string& error);
  void reload();
  std::string status_line() const;

  const std::string config_path_;
  const int stats_every_s_;
  const SocketOverrides sockets_;
  SignalWaiter& signals_;
  std::shared_ptr<spdlog::logger> log_;
  SystemdNotifier notifier_;
  std::shared_ptr<LatestFrames> frames_;  // each camera's latest frame, for the live view
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<MetricsServer> metrics_;
  config::ControlConfig control_config_;
  config::MetricsConfig metrics_config_;
};

}  // namespace edgetap::daemon
