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
#include "edgetap/cli/command_line.hpp"

namespace {

constexpr const char* kDescription = R"(Runs the EdgeTAP point-tracking daemon in the foreground: one capture pipeline
and tracker per camera of FILE, every frame's tracks published on the track
socket (publisher.socket) and, when enabled, over MQTT; a JSON-lines control
socket (control.socket); Prometheus /metrics and /healthz (metrics.listen).)";

constexpr const char* kFooter = R"(Signals: SIGHUP reloads FILE (a bad file keeps the running configuration);
SIGINT/SIGTERM stop. Under systemd it reports READY/RELOADING/STOPPING/STATUS
and pings the watchdog; logs go to the journal.
Exit status: 0 after SIGINT/SIGTERM, 78 on a bad configuration, 1 on other errors
(running as root without --allow-root among them), 2 on a bad flag.)";

}  // namespace

int main(int argc, char** argv) {
  using namespace edgetap;
  std::string config_path = cli::kDefaultConfigPath;
  int stats_every = 60;
  daemon::SocketOverrides sockets;
  bool allow_root = false;
  bool version = false;
  CLI::App app(kDescription, "edgetapd");
  cli::configure_app(app, kDescription, kFooter);
  cli::add_config_option(app, "configuration (default /etc/edgetap/edgetap.yaml)", config_path);
  app.add_option("--socket", sockets.track_socket, "the track socket, in place of publisher.socket of FILE")
      ->type_name("PATH");
  app.add_option("--control-socket", sockets.control_socket,
                 "the control socket, in place of control.socket of FILE (both hold over reloads; /run/edgetap, the "
                 "defaults' directory, exists under the systemd service only: run by hand, give paths in a directory "
                 "you can write, such as $XDG_RUNTIME_DIR)")
      ->type_name("PATH");
  cli::add_log_level_option(app, "trace, debug, info (default), warn, error, critical, off", daemon::set_log_level);
  cli::add_int_option(app, "--stats-every", "log a per-camera summary every SEC seconds (default 60, 0 = never)", 0,
                      86400 * 365, stats_every)
      ->type_name("SEC");
  app.add_flag("--allow-root", allow_root,
               "run even as root (refused otherwise: the daemon parses video streams and serves sockets, and needs "
               "no privilege)");
  app.add_flag("--version", version, "print the version and exit");
  if (const int status = cli::parse_command_line(app, argc, argv); status >= 0) return status;
  if (version) {
    std::puts("edgetapd " EDGETAP_VERSION);
    return 0;
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
