#include "edgetap/daemon/metrics_server.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

namespace edgetap::daemon {
namespace {

// A client that sends or reads nothing for this long is disconnected; an idle
// keep-alive connection is closed as soon. Scrapers and probes on a healthy
// host answer in milliseconds.
constexpr int kIoTimeoutS = 2;
constexpr std::size_t kRequestsPerConnection = 10;
// cpp-httplib serves each connection on a pool thread until it closes, so slow
// clients hold threads: 8 of them took all of the default pool (8 threads on a
// 2-core host) and /healthz waited. 32 threads, each freed within kIoTimeoutS
// of its client going quiet, keep probes answered beside 8 slow clients with
// room to spare; an idle thread costs only its stack.
constexpr std::size_t kThreads = 32;
// A request body (the live view's points) may be as long as a control request line.
constexpr std::size_t kMaxBodyBytes = 1 << 20;

}  // namespace

MetricsServer::MetricsServer(SnapshotSource source, std::shared_ptr<spdlog::logger> log, ExtraRoutes extra)
    : source_(std::move(source)), extra_(std::move(extra)), log_(std::move(log)) {}

MetricsServer::~MetricsServer() { stop(); }

bool MetricsServer::start(const std::string& address, int port, std::string& error) {
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  server_->set_read_timeout(kIoTimeoutS, 0);
  server_->set_write_timeout(kIoTimeoutS, 0);
  server_->set_keep_alive_timeout(kIoTimeoutS);
  server_->set_keep_alive_max_count(kRequestsPerConnection);
  server_->set_payload_max_length(kMaxBodyBytes);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(format_prometheus(source_()), "text/plain; version=0.0.4");
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const Snapshot snapshot = source_();
    res.status = healthy(snapshot) ? 200 : 503;
    res.set_content(health_json(snapshot).dump() + "\n", "application/json");
  });
  if (extra_) extra_(*server_);
  port_ = port == 0 ? server_->bind_to_any_port(address) : (server_->bind_to_port(address, port) ? port : -1);
  if (port_ <= 0) {
    error = "cannot listen for metrics on " + address + ":" + std::to_string(port);
    server_.reset();
    return false;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  log_->info("metrics on http://{}:{}/metrics and /healthz{}", address, port_,
             extra_ ? fmt::format(", the live view on http://{}:{}/", address, port_) : "");
  return true;
}

void MetricsServer::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace edgetap::daemon
