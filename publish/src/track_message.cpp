#include "edgetap/publish/track_message.hpp"
#include "edgetap/pixel_scale.hpp"

#include <nlohmann/json.hpp>

#include <cmath>

namespace edgetap::pipeline {

std::string encode_ndjson(const TrackMessage& m) {
  const Frame& f = *m.frame;
  // Model pixel centres map to source pixel centres.
  const double sx = static_cast<double>(f.source_width) / f.width;
  const double sy = static_cast<double>(f.source_height) / f.height;
  auto round2 = [](double v) { return std::round(v * 100.0) / 100.0; };

  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const TrackPoint& p : *m.points) {
    points.push_back({{"id", p.id},
                      {"x", round2(rescale_pixel<double>(p.x, sx))},
                      {"y", round2(rescale_pixel<double>(p.y, sy))},
                      {"visible", p.visible},
                      {"confidence", round2(p.confidence)},
                      {"lost", p.lost}});
  }
  nlohmann::ordered_json j;
  j["v"] = kSchemaVersion;
  j["type"] = "tracks";
  j["camera"] = m.camera;
  j["seq"] = m.seq;
  j["frame"] = f.index;
  j["capture_us"] = f.capture_unix_us;
  j["publish_us"] = m.publish_unix_us;
  j["latency_ms"] = round2(m.latency_ms);
  j["tracker_ms"] = round2(m.tracker_ms);
  j["rung"] = m.rung;
  j["queue_drops"] = m.queue_drops;
  j["size"] = {f.source_width, f.source_height};
  j["points"] = std::move(points);
  return j.dump();
}

}  // namespace edgetap::pipeline
