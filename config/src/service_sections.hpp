// The daemon-wide sections of the configuration: publisher, control, metrics, mqtt.
#pragma once

#include <yaml-cpp/yaml.h>

#include "edgetap/config/config.hpp"
#include "yaml_reader.hpp"

namespace edgetap::config::detail {

void read_publisher(YamlReader& r, const YAML::Node& node, PublisherConfig& out);
void read_control(YamlReader& r, const YAML::Node& node, ControlConfig& out);
void read_metrics(YamlReader& r, const YAML::Node& node, MetricsConfig& out);
void read_mqtt(YamlReader& r, const YAML::Node& node, MqttConfig& out);

}  // namespace edgetap::config::detail
