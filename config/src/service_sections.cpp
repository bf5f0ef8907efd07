#include "service_sections.hpp"

#include <grp.h>

#include <charconv>
#include <vector>

namespace edgetap::config::detail {
namespace {

// A socket's group: a group name this system knows ("" = the daemon's own group).
void read_group(YamlReader& r, const YAML::Node& map, const std::string& path, std::string& out) {
  const YAML::Node node = map["group"];
  if (!node) return;
  std::string name;
  r.read_string(map, path, "group", name, true);
  if (name.empty()) {
    out.clear();
    return;
  }
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    r.problem(node, path + ".group", "no group '" + name + "' on this system");
    return;
  }
  out = name;
}

// control.state_file: an absolute path to a file ("" = runtime points are not kept).
void read_state_file(YamlReader& r, const YAML::Node& map, std::string& out) {
  const YAML::Node node = map["state_file"];
  if (!node) return;
  std::string path;
  r.read_string(map, "control", "state_file", path, true);
  if (!path.empty() && (path.front() != '/' || path.back() == '/')) {
    r.problem(node, "control.state_file",
              "expected an absolute path to a file (e.g. /var/lib/edgetap/points.json) or \"\" for none, got '" +
                  path + "'");
    return;
  }
  out = path;
}

}  // namespace

void read_publisher(YamlReader& r, const YAML::Node& node, PublisherConfig& out) {
  if (!r.expect_map(node, "publisher", {"socket", "subscriber_queue", "max_subscribers", "group"})) return;
  r.read_string(node, "publisher", "socket", out.socket_path);
  r.read_int(node, "publisher", "subscriber_queue", 1, 100000, out.subscriber_queue);
  r.read_int(node, "publisher", "max_subscribers", 1, 10000, out.max_subscribers);
  read_group(r, node, "publisher", out.group);
}

void read_control(YamlReader& r, const YAML::Node& node, ControlConfig& out) {
  if (!r.expect_map(node, "control", {"socket", "group", "state_file", "max_points_per_request",
                                      "max_points_per_camera", "max_id_bytes"})) {
    return;
  }
  read_group(r, node, "control", out.group);
  read_state_file(r, node, out.state_file);
  r.read_int(node, "control", "max_points_per_request", 1, 100000, out.limits.max_points_per_request);
  r.read_int(node, "control", "max_points_per_camera", 1, 100000, out.limits.max_points_per_camera);
  r.read_int(node, "control", "max_id_bytes", 1, kLongestIdBytes, out.limits.max_id_bytes);
  if (const YAML::Node socket = node["socket"]) {
    // An empty string turns the control socket off.
    if (socket.IsScalar()) {
      out.socket_path = socket.Scalar();
    } else {
      r.problem(socket, "control.socket", "expected a path, or \"\" for no control socket");
    }
  }
}

void read_metrics(YamlReader& r, const YAML::Node& node, MetricsConfig& out) {
  if (!r.expect_map(node, "metrics", {"listen"})) return;
  const YAML::Node listen = node["listen"];
  if (!listen) return;
  const std::string text = listen.IsScalar() ? listen.Scalar() : "?";
  if (text.empty()) {
    out.enabled = false;
    return;
  }
  const std::size_t colon = text.rfind(':');
  int port = 0;
  const char* end = text.data() + text.size();
  const bool good = colon != std::string::npos && colon > 0 &&
                    std::from_chars(text.data() + colon + 1, end, port).ptr == end && port >= 1 && port <= 65535;
  if (!good) {
    r.problem(listen, "metrics.listen", "expected \"HOST:PORT\" with PORT in [1, 65535] (or \"\" for off), got '" + text + "'");
    return;
  }
  out.enabled = true;
  out.address = text.substr(0, colon);
  out.port = port;
}

void read_mqtt(YamlReader& r, const YAML::Node& node, MqttConfig& out) {
  if (!r.expect_map(node, "mqtt", {"enabled", "host", "port", "client_id", "topic_prefix", "keepalive_s", "qos",
                                   "credentials_file", "tls", "retry", "stats_every_s"})) {
    return;
  }
  r.read_bool(node, "mqtt", "enabled", out.enabled);
  r.read_string(node, "mqtt", "host", out.host);
  r.read_int(node, "mqtt", "port", 1, 65535, out.port);
  r.read_string(node, "mqtt", "client_id", out.client_id, true);
  r.read_string(node, "mqtt", "topic_prefix", out.topic_prefix);
  r.read_int(node, "mqtt", "keepalive_s", 5, 3600, out.keepalive_s);
  r.read_int(node, "mqtt", "qos", 0, 1, out.qos);
  r.read_string(node, "mqtt", "credentials_file", out.credentials_file, true);
  r.read_int(node, "mqtt", "stats_every_s", 0, 3600, out.stats_every_s);
  if (const YAML::Node tls = node["tls"]) {
    if (r.expect_map(tls, "mqtt.tls", {"ca_file", "cert_file", "key_file"})) {
      r.read_string(tls, "mqtt.tls", "ca_file", out.ca_file, true);
      r.read_string(tls, "mqtt.tls", "cert_file", out.cert_file, true);
      r.read_string(tls, "mqtt.tls", "key_file", out.key_file, true);
      if (out.cert_file.empty() != out.key_file.empty()) {
        r.problem(tls, "mqtt.tls", "cert_file and key_file go together");
      }
    }
  }
  if (const YAML::Node retry = node["retry"]) {
    if (r.expect_map(retry, "mqtt.retry", {"initial_ms", "max_ms"})) {
      r.read_int(retry, "mqtt.retry", "initial_ms", 100, 600000, out.retry_initial_ms);
      r.read_int(retry, "mqtt.retry", "max_ms", 100, 3600000, out.retry_max_ms);
    }
  }
}

}  // namespace edgetap::config::detail
