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

void scalar(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace

std::string format_prometheus(const Snapshot& s) {
  std::string out;
  const auto& c = s.cameras;
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
         [](const CameraStats& x) { return x.state == "running" ? 1 : 0; });
  family(out, "edgetap_rung", "gauge", "Degradation rung in force (0 = the best).", c,
         [](const CameraStats& x) { return x.rung_index; });
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
          {"state", x.state},
          {"error", x.error},
          {"frames_captured", x.frames_captured},
          {"frames_tracked", x.frames_tracked},
          {"queue_drops", x.queue_drops},
          {"restarts", x.reconnects},
          {"rung", x.rung},
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
    if (c.state != "running" && c.state != "ended") return false;
  }
  return true;
}

nlohmann::json health_json(const Snapshot& s) {
  nlohmann::json cameras = nlohmann::json::object();
  for (const CameraStats& c : s.cameras) cameras[c.name] = c.state;
  return {{"healthy", healthy(s)}, {"cameras", cameras}, {"subscribers", s.socket.subscribers}};
}

}  // namespace edgetap::daemon
