// The one MessageSink every camera publishes to. It forwards each message to
// the track socket and the MQTT bridge as the camera's `publish` settings say.
// Its targets can be swapped on reload while cameras keep publishing.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/pipeline/message_sink.hpp"

namespace edgetap::daemon {

class OutputRouter final : public pipeline::MessageSink {
 public:
  void publish(const std::string& camera, const std::string& json) override;

  void set_socket(pipeline::MessageSink* socket);
  void set_mqtt(pipeline::MessageSink* mqtt);
  void set_routes(const std::vector<config::CameraConfig>& cameras);

 private:
  std::shared_mutex mutex_;
  pipeline::MessageSink* socket_ = nullptr;
  pipeline::MessageSink* mqtt_ = nullptr;
  std::map<std::string, config::PublishSettings, std::less<>> routes_;
};

}  // namespace edgetap::daemon
