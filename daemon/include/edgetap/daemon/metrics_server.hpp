// /metrics (Prometheus text) and /healthz (JSON; 200 when every camera runs,
// else 503) over HTTP, on loopback by default, served on its own thread; the
// daemon adds the live view (live_view.hpp) to the same listener.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "edgetap/daemon/health.hpp"

namespace httplib { class Server; }
namespace spdlog { class logger; }

namespace edgetap::daemon {

class MetricsServer {
 public:
  using SnapshotSource = std::function<Snapshot()>;
  // Adds further routes (the live view) to the server before it listens.
  using ExtraRoutes = std::function<void(httplib::Server&)>;

  MetricsServer(SnapshotSource source, std::shared_ptr<spdlog::logger> log, ExtraRoutes extra = {});
  ~MetricsServer();

  // Binds address:port (port 0: any free port; see port()).
  bool start(const std::string& address, int port, std::string& error);
  void stop();
  int port() const noexcept { return port_; }

 private:
  SnapshotSource source_;
  ExtraRoutes extra_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace edgetap::daemon
