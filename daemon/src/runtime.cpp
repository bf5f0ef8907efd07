#include "edgetap/daemon/runtime.hpp"

#include <spdlog/fmt/fmt.h>

#include "edgetap/daemon/logging.hpp"

namespace edgetap::daemon {

Runtime::Runtime(config::Config config, ObserverFactory observers)
    : config_(std::move(config)),
      observers_(std::move(observers)),
      publisher_(config_.publisher.socket_path, static_cast<std::size_t>(config_.publisher.subscriber_queue),
                 make_logger("publisher")) {}

Runtime::~Runtime() { stop(); }

bool Runtime::start(std::string& error) {
  if (!publisher_.start(error)) return false;
  for (const config::CameraConfig& camera : config_.cameras) {
    FrameObserver observer = observers_ ? observers_(camera) : FrameObserver{};
    workers_.push_back(std::make_unique<CameraWorker>(camera, &publisher_, std::move(observer)));
    workers_.back()->start();
  }
  return true;
}

void Runtime::stop() {
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) (*it)->stop();
  publisher_.stop();
}

bool Runtime::all_finished() const {
  for (const auto& worker : workers_) {
    if (!worker->finished()) return false;
  }
  return true;
}

std::vector<CameraStats> Runtime::stats() const {
  std::vector<CameraStats> all;
  for (const auto& worker : workers_) all.push_back(worker->stats());
  return all;
}

std::string format_summary(const std::vector<CameraStats>& stats) {
  std::string out = fmt::format("{:<16} {:<8} {:>8} {:>8} {:>6} {:>7} {:>6} {:>9} {:>10} {:>8}\n", "camera", "state",
                                "captured", "tracked", "drops", "fps", "points", "lost", "track ms", "lat ms");
  for (const CameraStats& s : stats) {
    const double fps = s.seconds > 0 ? static_cast<double>(s.frames_tracked) / s.seconds : 0.0;
    out += fmt::format("{:<16} {:<8} {:>8} {:>8} {:>6} {:>7.1f} {:>6} {:>9} {:>10.2f} {:>8.2f}\n", s.name, s.state,
                       s.frames_captured, s.frames_tracked, s.queue_drops, fps, s.points, s.tracks_lost,
                       s.tracker_ms_mean, s.latency_ms_mean);
    if (!s.error.empty()) out += fmt::format("  {}: {}\n", s.name, s.error);
  }
  return out;
}

}  // namespace edgetap::daemon
