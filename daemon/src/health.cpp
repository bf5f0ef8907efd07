#include "edgetap/daemon/health.hpp"

#include <spdlog/fmt/fmt.h>

namespace edgetap::daemon {
namespace {

// One metric family: HELP and TYPE lines, then one sample per camera.
template <typename Value>
void family(std::string& out, const char* name, const char* type, const char* help,
            const std::vector<CameraStats>& cameras, Value value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  for (const CameraStats& c : cameras) out += fmt::format("{}{{camera=\"{}\"}} {}\n", name, c.name, value(c));
}

// A label value in the Prometheus text format: backslash, quote and newline escaped.
std::string label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void scalar(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace

std::string format_prometheus(const Snapshot& s) {
  std::string out;
  const auto& c = s.cameras;
  out += fmt::format("# HELP edgetap_build_info The edgetapd build running, by its version label.\n"
                     "# TYPE edgetap_build_info gauge\nedgetap_build_info{{version=\"{}\"}} 1\n",
                     label(EDGETAP_VERSION));
  out += "# HELP edgetap_engine_info What runs each camera's rung in force, in its labels.\n"
         "# TYPE edgetap_engine_info gauge\n";
  for (const CameraStats& x : c) {
    if (!x.engine) continue;
    const pipeline::EngineInfo& e = *x.engine;
    out += fmt::format(
        "edgetap_engine_info{{camera=\"{}\",model=\"{}\",model_version=\"{}\",backend=\"{}\",precision=\"{}\","
        "rung=\"{}\"}} 1\n",
        x.name, label(e.model), label(e.model_version), pipeline::to_string(e.backend),
        config::to_string(e.precision), label(e.rung));
  }
  family(out, "edgetap_frames_captured_total", "counter", "Frames delivered by the camera's pipeline.", c,
         [](const CameraStats& x) { return x.frames_captured; });
  family(out, "edgetap_frames_tracked_total", "counter", "Frames tracked and published.", c,
         [](const CameraStats& x) { return x.frames_tracked; });
  family(out, "edgetap_frames_dropped_total", "counter", "Frames dropped by the camera's bounded queue.", c,
         [](const CameraStats& x) { return x.queue_drops; });
  family(out, "edgetap_pipeline_restarts_total", "counter", "Pipeline restarts after an error, end or stall.", c,
         [](const CameraStats& x) { return x.reconnects; });
  family(out, "edgetap_tracks_lost_total", "counter", "Tracks the tracker gave up.", c,
         [](const CameraStats& x) { return x.tracks_lost; });
  family(out, "edgetap_points_tracked", "gauge", "Live tracks after the last frame.", c,
         [](const CameraStats& x) { return x.points; });
  family(out, "edgetap_camera_up", "gauge", "1 while the camera's pipeline runs.", c,
         [](const CameraStats& x) { return x.state == CameraState::running ? 1 : 0; });
  out += "# HELP edgetap_rung Degradation rung in force (0 = the best), named by the rung label.\n"
         "# TYPE edgetap_rung gauge\n";
  for (const CameraStats& x : c) {
    out += fmt::format("edgetap_rung{{camera=\"{}\",rung=\"{}\"}} {}\n", x.name, label(x.rung), x.rung_index);
  }
  family(out, "edgetap_rung_changes_total", "counter", "Rung changes, by the latency governor and by fail-overs.", c,
         [](const CameraStats& x) { return x.rung_changes; });
  family(out, "edgetap_rung_failures_total", "counter", "Rungs left because their tracker failed.", c,
         [](const CameraStats& x) { return x.rung_failures; });
  family(out, "edgetap_tracker_seconds_total", "counter", "Time spent in the tracker.", c,
         [](const CameraStats& x) { return x.tracker_ms_sum / 1e3; });
  out += "# HELP edgetap_latency_seconds Capture to publish latency.\n# TYPE edgetap_latency_seconds histogram\n";
  for (const CameraStats& x : c) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kLatencyBucketsMs.size(); ++i) {
      cumulative += x.latency_buckets[i];
      out += fmt::format("edgetap_latency_seconds_bucket{{camera=\"{}\",le=\"{}\"}} {}\n", x.name,
                         kLatencyBucketsMs[i] / 1e3, cumulative);
    }
    cumulative += x.latency_buckets.back();
    out += fmt::format("edgetap_latency_seconds_bucket{{camera=\"{}\",le=\"+Inf\"}} {}\n", x.name, cumulative);
    out += fmt::format("edgetap_latency_seconds_sum{{camera=\"{}\"}} {}\n", x.name, x.latency_ms_sum / 1e3);
    out += fmt::format("edgetap_latency_seconds_count{{camera=\"{}\"}} {}\n", x.name, cumulative);
  }
  scalar(out, "edgetap_subscribers", "gauge", "Track socket subscribers.", static_cast<double>(s.socket.subscribers));
  scalar(out, "edgetap_subscriber_dropped_total", "counter", "Messages dropped by slow track socket subscribers.",
         static_cast<double>(s.socket.subscriber_drops));
  scalar(out, "edgetap_subscribers_refused_total", "counter",
         "Track socket subscribers refused at publisher.max_subscribers.", static_cast<double>(s.socket.refused));
  if (s.mqtt) {
    scalar(out, "edgetap_mqtt_connected", "gauge", "1 while connected to the MQTT broker.", s.mqtt->connected ? 1 : 0);
    scalar(out, "edgetap_mqtt_published_total", "counter", "Messages handed to the MQTT broker.",
           static_cast<double>(s.mqtt->published));
    scalar(out, "edgetap_mqtt_dropped_total", "counter", "Messages not sent to MQTT (disconnected).",
           static_cast<double>(s.mqtt->dropped));
    scalar(out, "edgetap_mqtt_connects_total", "counter", "Successful MQTT connections.",
           static_cast<double>(s.mqtt->connects));
    scalar(out, "edgetap_mqtt_throttled_total", "counter", "Messages the cameras' mqtt throttles kept from the broker.",
           static_cast<double>(s.mqtt->throttled));
  }
  return out;
}

nlohmann::json camera_json(const CameraStats& x) {
  return {{"name", x.name},
          {"state", to_string(x.state)},
          {"error", x.error},
          {"frames_captured", x.frames_captured},
          {"frames_tracked", x.frames_tracked},
          {"queue_drops", x.queue_drops},
          {"restarts", x.reconnects},
          {"rung", x.rung},
          {"engine", x.engine ? pipeline::engine_json(*x.engine) : nlohmann::json(nullptr)},
          {"rung_changes", x.rung_changes},
          {"rung_failures", x.rung_failures},
          {"latency_percentile_ms", x.latency_percentile_ms},
          {"frames_strided", x.frames_strided},
          {"points", x.points},
          {"tracks_lost", x.tracks_lost},
          {"tracker_ms_mean", x.tracker_ms_mean},
          {"latency_ms_mean", x.latency_ms_mean},
          {"latency_ms_max", x.latency_ms_max},
          {"fps", x.seconds > 0 ? static_cast<double>(x.frames_tracked) / x.seconds : 0.0}};
}

bool healthy(const Snapshot& s) {
  for (const CameraStats& c : s.cameras) {
    if (c.state != CameraState::running && c.state != CameraState::ended) return false;
  }
  return true;
}

nlohmann::json health_json(const Snapshot& s) {
  nlohmann::json cameras = nlohmann::json::object();
  for (const CameraStats& c : s.cameras) cameras[c.name] = to_string(c.state);
  return {{"healthy", healthy(s)}, {"cameras", cameras}, {"subscribers", s.socket.subscribers}};
}

}  // namespace edgetap::daemon
