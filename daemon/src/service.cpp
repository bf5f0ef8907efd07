#include "edgetap/daemon/service.hpp"

#include <signal.h>
#include <spdlog/fmt/fmt.h>
#include <string.h>

#include <algorithm>
#include <chrono>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/control_commands.hpp"
#include "edgetap/daemon/live_view.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::daemon {

using namespace std::chrono;

Service::Service(std::string config_path, int stats_every_s, SignalWaiter& signals, SocketOverrides sockets)
    : config_path_(std::move(config_path)),
      stats_every_s_(stats_every_s),
      sockets_(std::move(sockets)),
      signals_(signals),
      log_(make_logger("daemon")),
      frames_(std::make_shared<LatestFrames>()) {}

Service::~Service() {
  control_.reset();
  metrics_.reset();
  runtime_.reset();
}

bool Service::start_endpoints(const config::Config& config, std::string& error) {
  std::string control_error, metrics_error;
  const bool control_ok = swap_control(config.control, control_error);
  const bool metrics_ok = swap_metrics(config.metrics, metrics_error);
  error = control_error + (!control_ok && !metrics_ok ? "; " : "") + metrics_error;
  return control_ok && metrics_ok;
}

namespace {

// Puts the endpoint `next` opens in place of `current`, which keeps serving
// until the new one is open; where both need one place (`same_place`: a path
// or port), the old one closes first and is reopened when the new one fails.
// `open(settings, error)` returns null with `error` on failure.
template <class Endpoint, class Settings, class Open>
bool replace_endpoint(std::unique_ptr<Endpoint>& current, Settings& current_settings, const Settings& next,
                      bool same_place, const Open& open, const char* what, std::string& error) {
  if (same_place) current.reset();
  auto opened = open(next, error);
  if (!opened) {
    if (same_place) {
      std::string again;
      current = open(current_settings, again);
      if (!current) error += std::string("; reopening the old ") + what + " failed too: " + again;
    }
    return false;
  }
  current = std::move(opened);  // an old one elsewhere closes only now
  current_settings = next;
  return true;
}

}  // namespace

bool Service::swap_control(const config::ControlConfig& next, std::string& error) {
  if (control_ && next.same_endpoint(control_config_)) {
    control_config_ = next;  // the limits: the runtime's configuration, read per request
    return true;
  }
  if (next.socket_path.empty()) {
    control_.reset();
    control_config_ = next;
    return true;
  }
  const auto open = [this](const config::ControlConfig& settings, std::string& why) {
    auto control = std::make_unique<ControlServer>(
        settings.socket_path, [this](const nlohmann::json& r) { return handle_control_request(*runtime_, r); },
        make_logger("control"), settings.group);
    if (!control->start(why)) control.reset();
    return control;
  };
  const bool same_path = control_ && next.socket_path == control_config_.socket_path;
  return replace_endpoint(control_, control_config_, next, same_path, open, "control socket", error);
}

bool Service::swap_metrics(const config::MetricsConfig& next, std::string& error) {
  if (metrics_ && next == metrics_config_) return true;
  if (!next.enabled) {
    metrics_.reset();
    metrics_config_ = next;
    return true;
  }
  const auto open = [this](const config::MetricsConfig& settings, std::string& why) {
    const auto live_view = [this](httplib::Server& server) {
      add_live_view_routes(server, {[this] { return runtime_->directory().names(); }, frames_,
                                    [this](const nlohmann::json& r) { return handle_control_request(*runtime_, r); }});
    };
    auto metrics = std::make_unique<MetricsServer>([this] { return runtime_->snapshot(); }, make_logger("metrics"),
                                                   live_view);
    if (!metrics->start(settings.address, settings.port, why)) metrics.reset();
    return metrics;
  };
  const bool same_port = metrics_ && next.address == metrics_config_.address && next.port == metrics_config_.port;
  return replace_endpoint(metrics_, metrics_config_, next, same_port, open, "metrics endpoint", error);
}

namespace {

// What a daemon with no cameras says in its STATUS= line and log, so that the
// first `systemctl status edgetapd` after install tells the operator what to do.
std::string no_cameras_hint(const std::string& config_path) {
  return "no cameras configured: add one under 'cameras:' in " + config_path +
         " (the shipped file has commented examples: RTSP, V4L2, a file, the demo clip, a test pattern),"
         " check it with `edgetap check-config " +
         config_path + "`, then `systemctl reload edgetapd`";
}

}  // namespace

std::string Service::status_line() const {
  const Snapshot s = runtime_->snapshot();
  if (s.cameras.empty()) return no_cameras_hint(config_path_) + fmt::format("; {} subscribers", s.socket.subscribers);
  const auto running = std::count_if(s.cameras.begin(), s.cameras.end(), [](const auto& c) { return c.state == CameraState::running; });
  return fmt::format("{} of {} cameras running, {} subscribers", running, s.cameras.size(), s.socket.subscribers);
}

int Service::run() {
  config::Config config;
  try {
    config = config::load_file(config_path_);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    log_->critical("bad configuration in {}; not starting", config_path_);
    return config::kExitBadConfig;
  }
  sockets_.apply(config);
  if (const auto problems = socket_directory_problems(config); !problems.empty()) {
    for (const std::string& problem : problems) log_->critical("{}", problem);
    return 1;
  }
  log_->info("edgetapd {} starting: {} camera(s) from {}", EDGETAP_VERSION, config.cameras.size(), config_path_);
  log_->info("{}", kernels::describe_backend_choice(backend::probe_gpus()));

  runtime_ = std::make_unique<Runtime>(
      config, [frames = frames_](const config::CameraConfig& camera) { return LatestFrames::observer(frames, camera.name); });
  std::string error;
  if (!runtime_->start(error) || !start_endpoints(config, error)) {
    log_->critical("{}", error);
    notifier_.status("failed to start: " + error);
    return 1;
  }
  if (config.cameras.empty()) log_->warn("{}", no_cameras_hint(config_path_));
  notifier_.ready(status_line());
  const auto watchdog = duration_cast<milliseconds>(notifier_.watchdog_interval());
  const milliseconds tick = watchdog.count() > 0 ? std::min(milliseconds(1000), watchdog / 2) : milliseconds(1000);
  if (watchdog.count() > 0) log_->info("systemd watchdog: pinging every {} ms", tick.count());
  auto last_stats = steady_clock::now();
  auto last_mqtt_stats = steady_clock::time_point{};  // the first tick sends them
  for (;;) {
    const int signal = signals_.wait(tick);
    notifier_.watchdog();
    if (signal == SIGINT || signal == SIGTERM) {
      log_->info("{}: stopping", strsignal(signal));
      break;
    }
    if (signal == SIGHUP) reload();
    notifier_.status(status_line());
    if (stats_every_s_ > 0 && steady_clock::now() - last_stats > seconds(stats_every_s_)) {
      last_stats = steady_clock::now();
      log_->info("cameras:\n{}", format_summary(runtime_->stats()));
    }
    if (const int every_s = runtime_->config().mqtt.stats_every_s;
        every_s > 0 && steady_clock::now() - last_mqtt_stats >= seconds(every_s)) {
      last_mqtt_stats = steady_clock::now();
      runtime_->publish_mqtt_stats(mqtt_stats_message(*runtime_).dump());
    }
  }
  notifier_.stopping("stopping");
  control_.reset();
  metrics_.reset();
  runtime_->stop();
  log_->info("stopped\n{}", format_summary(runtime_->stats()));
  return 0;
}

void Service::reload() {
  notifier_.reloading("reloading " + config_path_);
  log_->info("SIGHUP: reloading {}", config_path_);
  config::Config next;
  try {
    next = config::load_file(config_path_);
  } catch (const config::ConfigError& e) {
    log_->error("reload rejected, the running configuration stays:\n{}", e.what());
    notifier_.ready("reload rejected (" + e.problems().front().to_string() + "); " + status_line());
    return;
  }
  sockets_.apply(next);
  ReloadSummary summary;
  std::string error;
  if (!runtime_->apply(next, summary, error)) {
    log_->error("reload failed: {}", error);
    notifier_.ready("reload failed (" + error + "); " + status_line());
    return;
  }
  if (!start_endpoints(next, error)) {
    // The cameras and the track socket have the new configuration; a failed endpoint keeps its old one.
    log_->error("reload partly failed: {}; that endpoint keeps its old settings; {}", error, summary.to_string());
    notifier_.ready("reload partly failed (" + error + "); " + status_line());
    return;
  }
  log_->info("reloaded: {}", summary.to_string());
  if (next.cameras.empty()) log_->warn("{}", no_cameras_hint(config_path_));
  notifier_.ready(status_line());
}

}  // namespace edgetap::daemon
