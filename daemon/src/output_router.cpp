#include "edgetap/daemon/output_router.hpp"

#include <mutex>

namespace edgetap::daemon {

void OutputRouter::publish(const std::string& camera, const std::string& json) {
  std::shared_lock lock(mutex_);
  const auto route = routes_.find(camera);
  const config::PublishSettings settings = route == routes_.end() ? config::PublishSettings{} : route->second;
  if (socket_ != nullptr && settings.socket) socket_->publish(camera, json);
  if (mqtt_ != nullptr && settings.mqtt) mqtt_->publish(camera, json);
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
  routes_.clear();
  for (const auto& camera : cameras) routes_[camera.name] = camera.publish;
}

}  // namespace edgetap::daemon
