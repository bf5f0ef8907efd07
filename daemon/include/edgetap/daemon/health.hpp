// A point-in-time view of the whole daemon, and its renderings: Prometheus
// text for /metrics and JSON for /healthz and the control socket.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "edgetap/camera/camera_stats.hpp"
#include "edgetap/publish/mqtt_bridge.hpp"
#include "edgetap/publish/publisher.hpp"

namespace edgetap::daemon {

struct Snapshot {
  std::vector<CameraStats> cameras;
  pipeline::PublisherStats socket;
  std::optional<pipeline::MqttStats> mqtt;  // when the bridge is enabled
};

std::string format_prometheus(const Snapshot& snapshot);
nlohmann::json camera_json(const CameraStats& stats);
// Healthy when every camera is running (files that ended count as healthy).
bool healthy(const Snapshot& snapshot);
nlohmann::json health_json(const Snapshot& snapshot);

}  // namespace edgetap::daemon
