// edgetapd: the EdgeTAP daemon (foreground). Loads the configuration, runs
// every camera, serves the track socket, and stops cleanly on SIGINT/SIGTERM.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/daemon/signals.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace {

constexpr const char* kUsage = R"(usage: edgetapd [--config FILE] [--log-level LEVEL]

Runs the EdgeTAP point-tracking daemon in the foreground: one capture pipeline
and tracker per camera of FILE, every frame's tracks published on the track
socket named in the file (publisher.socket).

  --config FILE      configuration (default /etc/edgetap/edgetap.yaml)
  --log-level LEVEL  trace, debug, info (default), warn, error, critical, off
  --stats-every SEC  log a per-camera summary every SEC seconds (default 60, 0 = never)
  --help, --version

Exit status: 0 after SIGINT/SIGTERM, 78 on a bad configuration, 1 on other errors.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace edgetap;
  std::string config_path = "/etc/edgetap/edgetap.yaml";
  int stats_every = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::puts("edgetapd " EDGETAP_VERSION);
      return 0;
    } else if (arg == "--config" && has_value) {
      config_path = argv[++i];
    } else if (arg == "--log-level" && has_value) {
      if (!daemon::set_log_level(argv[++i])) {
        std::fprintf(stderr, "edgetapd: unknown log level '%s'\n", argv[i]);
        return 2;
      }
    } else if (arg == "--stats-every" && has_value) {
      stats_every = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "edgetapd: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }

  daemon::SignalWaiter signals({SIGINT, SIGTERM, SIGHUP});
  auto log = daemon::make_logger("daemon");
  config::Config config;
  try {
    config = config::load_file(config_path);
  } catch (const config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    log->critical("bad configuration in {}; not starting", config_path);
    return config::kExitBadConfig;
  }
  log->info("edgetapd {} starting: {} camera(s) from {}", EDGETAP_VERSION, config.cameras.size(), config_path);
  log->info("{}", kernels::describe_backend_choice(kernels::probe_gpus()));

  daemon::Runtime runtime(std::move(config));
  std::string error;
  if (!runtime.start(error)) {
    log->critical("{}", error);
    return 1;
  }
  int since_stats = 0;
  for (;;) {
    const int signal = signals.wait(std::chrono::milliseconds(1000));
    if (signal == SIGINT || signal == SIGTERM) {
      log->info("{}: stopping", strsignal(signal));
      break;
    }
    if (signal == SIGHUP) log->warn("SIGHUP: configuration reload is not supported by this version; restart to apply");
    if (stats_every > 0 && ++since_stats >= stats_every) {
      since_stats = 0;
      log->info("cameras:\n{}", daemon::format_summary(runtime.stats()));
    }
  }
  runtime.stop();
  log->info("stopped\n{}", daemon::format_summary(runtime.stats()));
  return 0;
}
