// The one MessageSink every camera publishes to. It forwards each message to
// the track socket and the MQTT bridge as the camera's `publish` settings say.
// MQTT gets only what the camera's throttle (its `mqtt` key) lets through.
// Its targets can be swapped on reload while cameras keep publishing.
#pragma once

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/publish/mqtt_throttle.hpp"
#include "edgetap/publish/message_sink.hpp"

namespace edgetap::daemon {

class OutputRouter final : public pipeline::MessageSink {
 public:
  void publish(const std::string& camera, const std::string& json) override;

  void set_socket(pipeline::MessageSink* socket);
  void set_mqtt(pipeline::MessageSink* mqtt);
  // A camera whose throttle settings are unchanged keeps its throttle's state.
  void set_routes(const std::vector<config::CameraConfig>& cameras);
  // Messages the throttles kept from MQTT, all cameras of the current routes.
  std::uint64_t mqtt_held_back() const;

 private:
  struct Route {
    config::PublishSettings publish;
    MqttThrottle throttle;
  };
  mutable std::shared_mutex mutex_;
  mutable std::mutex throttle_mutex_;  // the throttles' state, under a shared lock of mutex_
  pipeline::MessageSink* socket_ = nullptr;
  pipeline::MessageSink* mqtt_ = nullptr;
  std::map<std::string, Route, std::less<>> routes_;
};

}  // namespace edgetap::daemon
