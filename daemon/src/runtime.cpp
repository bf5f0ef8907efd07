#include "edgetap/daemon/runtime.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <algorithm>

#include "edgetap/daemon/control_commands.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/ladder/gpu_warm_up.hpp"

namespace edgetap::daemon {
namespace {

std::unique_ptr<pipeline::Publisher> make_publisher(const config::PublisherConfig& settings,
                                                    const pipeline::CameraDirectory& directory) {
  return std::make_unique<pipeline::Publisher>(
      settings.socket_path, static_cast<std::size_t>(settings.subscriber_queue), make_logger("publisher"),
      pipeline::PublisherOptions{static_cast<std::size_t>(settings.max_subscribers), settings.group, &directory});
}

std::vector<std::string> names_of(const std::vector<config::CameraConfig>& cameras) {
  std::vector<std::string> names;
  for (const config::CameraConfig& c : cameras) names.push_back(c.name);
  return names;
}

// Equal settings, wherever the camera sits in the file.
bool same_camera(config::CameraConfig a, config::CameraConfig b) {
  a.line = b.line = 0;
  return a == b;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "-" : out;
}

}  // namespace

std::string ReloadSummary::to_string() const {
  return fmt::format("kept [{}], restarted [{}], stopped [{}], started [{}]{}{}", join(kept), join(restarted),
                     join(stopped), join(started), publisher_restarted ? ", track socket reopened" : "",
                     mqtt_restarted ? ", MQTT bridge restarted" : "");
}

Runtime::Runtime(config::Config config, ObserverFactory observers)
    : config_(std::move(config)), observers_(std::move(observers)), points_state_(make_logger("state")) {}

Runtime::~Runtime() { stop(); }

// `limits`: the configuration's the camera starts under (a reload's, before it is in force).
// Not started, but warmed up: the callers make every new camera's tracker and pay its first
// frames' set-up first (GPU set-up takes the device alone, device_setup.hpp), then start
// them, so that no new camera streams while another is still being set up (16 cameras
// dropped their first 2-3 s of frames so).
std::unique_ptr<CameraWorker> Runtime::make_worker(const config::CameraConfig& camera, const config::ControlLimits& limits) {
  FrameObserver observer = observers_ ? observers_(camera) : FrameObserver{};
  auto worker = std::make_unique<CameraWorker>(camera, &router_, models_, gate_, governor_peers_, std::move(observer), &directory_);
  worker->restore_points(points_state_.points(camera.name), static_cast<std::size_t>(limits.max_points_per_camera));
  worker->warm_up();
  return worker;
}

bool Runtime::start(std::string& error) {
  std::lock_guard lock(mutex_);
  ReloadSummary ignored;
  if (!swap_outputs(config_, true, ignored, error)) return false;
  router_.set_routes(config_.cameras);
  directory_.set_cameras(names_of(config_.cameras));
  points_state_.open(config_.control.state_file);
  const pipeline::GpuWarmUp warm_up = pipeline::warm_up_gpu(config_.cameras, models_);
  if (warm_up.tracker) make_logger("daemon")->info("GPU warmed up before the cameras start: {:.0f} ms", warm_up.ms);
  for (const config::CameraConfig& camera : config_.cameras) workers_.push_back(make_worker(camera, config_.control.limits));
  for (const auto& worker : workers_) worker->start();
  return true;
}

void Runtime::stop() {
  std::lock_guard lock(mutex_);
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) (*it)->stop();  // kept for their final stats
  router_.set_socket(nullptr);
  router_.set_mqtt(nullptr);
  if (mqtt_) mqtt_->stop();
  if (publisher_) publisher_->stop();
}

bool Runtime::swap_outputs(const config::Config& next, bool first, ReloadSummary& summary, std::string& error) {
  if (first || !(next.publisher == config_.publisher)) {
    auto publisher = make_publisher(next.publisher, directory_);
    const bool same_path = publisher_ && next.publisher.socket_path == config_.publisher.socket_path;
    if (same_path) publisher_->stop();  // the new one takes over the path
    if (!publisher->start(error)) {
      if (same_path) publisher_->start(error);
      return false;
    }
    router_.set_socket(publisher.get());
    if (publisher_) publisher_->stop();
    publisher_ = std::move(publisher);
    summary.publisher_restarted = true;
  }
  if (first ? next.mqtt.enabled : !(next.mqtt == config_.mqtt)) {
    std::unique_ptr<pipeline::MqttBridge> bridge;
    if (next.mqtt.enabled) {
      bridge = std::make_unique<pipeline::MqttBridge>(next.mqtt, make_logger("mqtt"));
      if (!bridge->start(error)) return false;
    }
    router_.set_mqtt(bridge.get());
    if (mqtt_) mqtt_->stop();
    mqtt_ = std::move(bridge);
    summary.mqtt_restarted = true;
  }
  return true;
}

bool Runtime::apply(config::Config next, ReloadSummary& summary, std::string& error) {
  std::lock_guard lock(mutex_);
  if (!swap_outputs(next, false, summary, error)) return false;
  router_.set_routes(next.cameras);
  directory_.set_cameras(names_of(next.cameras));
  // Another state file is read afresh: cameras made from here on restore what it holds.
  if (next.control.state_file != points_state_.path()) points_state_.open(next.control.state_file);
  std::vector<std::unique_ptr<CameraWorker>> workers;
  std::vector<CameraWorker*> made;
  for (const config::CameraConfig& camera : next.cameras) {
    auto it = std::find_if(workers_.begin(), workers_.end(),
                           [&](const auto& w) { return w && w->name() == camera.name; });
    if (it != workers_.end() && same_camera((*it)->config(), camera)) {
      summary.kept.push_back(camera.name);
      workers.push_back(std::move(*it));
      continue;
    }
    if (it != workers_.end()) {
      (*it)->stop();
      it->reset();
      summary.restarted.push_back(camera.name);
    } else {
      summary.started.push_back(camera.name);
    }
    workers.push_back(make_worker(camera, next.control.limits));
    made.push_back(workers.back().get());
  }
  for (CameraWorker* worker : made) worker->start();
  for (auto& worker : workers_) {
    if (!worker) continue;
    summary.stopped.push_back(worker->name());
    worker->stop();
  }
  workers_ = std::move(workers);
  config_ = std::move(next);
  return true;
}

bool Runtime::all_finished() const {
  std::lock_guard lock(mutex_);
  return std::all_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->finished(); });
}

std::vector<CameraStats> Runtime::stats() const {
  std::lock_guard lock(mutex_);
  std::vector<CameraStats> all;
  for (const auto& worker : workers_) all.push_back(worker->stats());
  return all;
}

pipeline::PublisherStats Runtime::publisher_stats() const {
  std::lock_guard lock(mutex_);
  return publisher_ ? publisher_->stats() : pipeline::PublisherStats{};
}

Snapshot Runtime::snapshot() const {
  Snapshot snapshot;
  snapshot.cameras = stats();
  std::lock_guard lock(mutex_);
  if (publisher_) snapshot.socket = publisher_->stats();
  if (mqtt_) {
    snapshot.mqtt = mqtt_->stats();
    snapshot.mqtt->throttled = router_.mqtt_held_back();
  }
  return snapshot;
}

void Runtime::publish_mqtt_stats(const std::string& json) {
  std::lock_guard lock(mutex_);
  if (mqtt_) mqtt_->publish_stats(json);
}

config::Config Runtime::config() const {
  std::lock_guard lock(mutex_);
  return config_;
}

config::ControlLimits Runtime::control_limits() const {
  std::lock_guard lock(mutex_);
  return config_.control.limits;
}

bool Runtime::with_camera(const std::string& name, const std::function<void(CameraWorker&)>& action) {
  std::lock_guard lock(mutex_);
  for (auto& worker : workers_) {
    if (worker->name() != name) continue;
    action(*worker);
    return true;
  }
  return false;
}

std::string format_summary(const std::vector<CameraStats>& stats) {
  std::string out = fmt::format("{:<16} {:<12} {:>8} {:>8} {:>6} {:>7} {:>6} {:>6} {:>8} {:>9} {:>8}\n", "camera",
                                "state", "captured", "tracked", "drops", "fps", "points", "lost", "restarts",
                                "track ms", "lat ms");
  for (const CameraStats& s : stats) {
    const double fps = s.seconds > 0 ? static_cast<double>(s.frames_tracked) / s.seconds : 0.0;
    out += fmt::format("{:<16} {:<12} {:>8} {:>8} {:>6} {:>7.1f} {:>6} {:>6} {:>8} {:>9.2f} {:>8.2f}\n", s.name,
                       to_string(s.state), s.frames_captured, s.frames_tracked, s.queue_drops, fps, s.points, s.tracks_lost,
                       s.reconnects, s.tracker_ms_mean, s.latency_ms_mean);
    if (!s.error.empty()) out += fmt::format("  {}: {}\n", s.name, s.error);
    if (!s.rungs_used.empty()) {
      out += fmt::format("  {} rungs: {} (now {}, {} changes)\n", s.name, fmt::join(s.rungs_used, ", "), s.rung,
                         s.rung_changes);
    }
  }
  return out;
}

}  // namespace edgetap::daemon
