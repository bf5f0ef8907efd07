#include "edgetap/publish/output_router.hpp"

#include <mutex>

namespace edgetap::daemon {

void OutputRouter::publish(const std::string& camera, const std::string& json) {
  std::shared_lock lock(mutex_);
  const auto route = routes_.find(camera);
  const config::PublishSettings settings = route == routes_.end() ? config::PublishSettings{} : route->second.publish;
  if (socket_ != nullptr && settings.socket) socket_->publish(camera, json);
  if (mqtt_ == nullptr || !settings.mqtt) return;
  bool admitted = true;
  if (route != routes_.end()) {
    std::lock_guard throttle_lock(throttle_mutex_);
    admitted = route->second.throttle.admit(MqttThrottle::Clock::now());
  }
  if (admitted) mqtt_->publish(camera, json);
}

std::uint64_t OutputRouter::mqtt_held_back() const {
  std::shared_lock lock(mutex_);
  std::lock_guard throttle_lock(throttle_mutex_);
  std::uint64_t total = 0;
  for (const auto& [name, route] : routes_) total += route.throttle.held_back();
  return total;
}

void OutputRouter::set_socket(pipeline::MessageSink* socket) {
  std::unique_lock lock(mutex_);
  socket_ = socket;
}

void OutputRouter::set_mqtt(pipeline::MessageSink* mqtt) {
  std::unique_lock lock(mutex_);
  mqtt_ = mqtt;
}

void OutputRouter::set_routes(const std::vector<config::CameraConfig>& cameras) {
  std::unique_lock lock(mutex_);
  std::map<std::string, Route, std::less<>> next;
  for (const auto& camera : cameras) {
    const auto kept = routes_.find(camera.name);
    const bool same = kept != routes_.end() && kept->second.throttle.settings() == camera.mqtt;
    next.emplace(camera.name, Route{camera.publish, same ? kept->second.throttle : MqttThrottle(camera.mqtt)});
  }
  routes_ = std::move(next);
}

}  // namespace edgetap::daemon
