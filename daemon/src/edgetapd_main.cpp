// edgetapd: the EdgeTAP daemon (foreground; systemd Type=notify). Loads the
// configuration, runs every camera, serves the track and control sockets and
// /metrics, reloads on SIGHUP and stops cleanly on SIGINT/SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/malloc_arenas.hpp"
#include "edgetap/daemon/service.hpp"
#include "edgetap/daemon/signals.hpp"
#include "edgetap/daemon/socket_paths.hpp"
#include "edgetap/cli/option_numbers.hpp"

namespace {

constexpr const char* kUsage = R"(usage: edgetapd [--config FILE] [--socket PATH] [--control-socket PATH]
                [--log-level LEVEL] [--stats-every SEC] [--allow-root]

Runs the EdgeTAP point-tracking daemon in the foreground: one capture pipeline
and tracker per camera of FILE, every frame's tracks published on the track
socket (publisher.socket) and, when enabled, over MQTT; a JSON-lines control
socket (control.socket); Prometheus /metrics and /healthz (metrics.listen).

  --config FILE      configuration (default /etc/edgetap/edgetap.yaml)
  --socket PATH      the track socket, in place of publisher.socket of FILE
  --control-socket PATH
                     the control socket, in place of control.socket of FILE
                     (both hold over reloads; /run/edgetap, the defaults'
                     directory, exists under the systemd service only: run by
                     hand, give paths in a directory you can write, such as
                     $XDG_RUNTIME_DIR)
  --log-level LEVEL  trace, debug, info (default), warn, error, critical, off
  --stats-every SEC  log a per-camera summary every SEC seconds (default 60, 0 = never)
  --allow-root       run even as root (refused otherwise: the daemon parses video
                     streams and serves sockets, and needs no privilege)
  --help, --version

Signals: SIGHUP reloads FILE (a bad file keeps the running configuration);
SIGINT/SIGTERM stop. Under systemd it reports READY/RELOADING/STOPPING/STATUS
and pings the watchdog; logs go to the journal.
Exit status: 0 after SIGINT/SIGTERM, 78 on a bad configuration, 1 on other errors
(running as root without --allow-root among them).
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace edgetap;
  std::string config_path = "/etc/edgetap/edgetap.yaml";
  int stats_every = 60;
  daemon::SocketOverrides sockets;
  bool allow_root = false;
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
    } else if (arg == "--socket" && has_value) {
      sockets.track_socket = argv[++i];
    } else if (arg == "--control-socket" && has_value) {
      sockets.control_socket = argv[++i];
    } else if (arg == "--log-level" && has_value) {
      if (!daemon::set_log_level(argv[++i])) {
        std::fprintf(stderr, "edgetapd: unknown log level '%s'\n", argv[i]);
        return 2;
      }
    } else if (arg == "--allow-root") {
      allow_root = true;
    } else if (arg == "--stats-every" && has_value) {
      if (!daemon::read_int_option("edgetapd", arg, argv[++i], 0, 86400 * 365, stats_every)) return 2;
    } else {
      std::fprintf(stderr, "edgetapd: unknown or incomplete argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  if (::geteuid() == 0 && !allow_root) {
    std::fputs("edgetapd: refusing to run as root: run it as an unprivileged user (the edgetapd.service unit runs it "
               "as 'edgetap'), or pass --allow-root\n",
               stderr);
    return 1;
  }
  daemon::limit_malloc_arenas();  // before any thread: RSS stays flat over camera restarts
  daemon::SignalWaiter signals({SIGINT, SIGTERM, SIGHUP});
  daemon::Service service(config_path, stats_every, signals, sockets);
  return service.run();
}
