// Where a camera's per-frame messages go: the track socket, the MQTT bridge,
// or several of them. publish() is called on the tracking thread and must
// never block on a consumer.
#pragma once

#include <string>

namespace edgetap::pipeline {

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  // `json` is one JSON object (schema in the README), without a newline.
  virtual void publish(const std::string& camera, const std::string& json) = 0;
};

}  // namespace edgetap::pipeline
