#include "edgetap/daemon/service.hpp"

#include <signal.h>
#include <spdlog/fmt/fmt.h>
#include <string.h>

#include <algorithm>
#include <chrono>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/control_commands.hpp"
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
      log_(make_logger("daemon")) {}

Service::~Service() {
  control_.reset();
  metrics_.reset();
  runtime_.reset();
}

bool Service::start_endpoints(const config::Config& config, std::string& error) {
  if (!(config.control == control_config_) || !control_) {
    control_.reset();
    if (!config.control.socket_path.empty()) {
      auto control = std::make_unique<ControlServer>(
          config.control.socket_path, [this](const nlohmann::json& r) { return handle_control_request(*runtime_, r); },
          make_logger("control"));
      if (!control->start(error)) return false;
      control_ = std::move(control);
    }
    control_config_ = config.control;
  }
  if (!(config.metrics == metrics_config_) || !metrics_) {
    metrics_.reset();
    if (config.metrics.enabled) {
      auto metrics = std::make_unique<MetricsServer>([this] { return runtime_->snapshot(); }, make_logger("metrics"));
      if (!metrics->start(config.metrics.address, config.metrics.port, error)) return false;
      metrics_ = std::move(metrics);
    }
    metrics_config_ = config.metrics;
  }
  return true;
}

std::string Service::status_line() const {
  const Snapshot s = runtime_->snapshot();
  const auto running = std::count_if(s.cameras.begin(), s.cameras.end(), [](const auto& c) { return c.state == "running"; });
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

  runtime_ = std::make_unique<Runtime>(config);
  std::string error;
  if (!runtime_->start(error) || !start_endpoints(config, error)) {
    log_->critical("{}", error);
    notifier_.status("failed to start: " + error);
    return 1;
  }
  notifier_.ready(status_line());
  const auto watchdog = duration_cast<milliseconds>(notifier_.watchdog_interval());
  const milliseconds tick = watchdog.count() > 0 ? std::min(milliseconds(1000), watchdog / 2) : milliseconds(1000);
  if (watchdog.count() > 0) log_->info("systemd watchdog: pinging every {} ms", tick.count());
  auto last_stats = steady_clock::now();
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
  if (!runtime_->apply(next, summary, error) || !start_endpoints(next, error)) {
    log_->error("reload failed: {}", error);
    notifier_.ready("reload failed (" + error + "); " + status_line());
    return;
  }
  log_->info("reloaded: {}", summary.to_string());
  notifier_.ready(status_line());
}

}  // namespace edgetap::daemon
