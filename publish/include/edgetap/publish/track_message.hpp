// The track socket's message: one JSON object per processed frame per camera
// (schema version 1, documented in the README). Built once per frame and
// shared by every subscriber.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgetap/capture/frame.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

inline constexpr int kSchemaVersion = 1;

struct TrackMessage {
  std::string camera;
  std::uint64_t seq = 0;            // per camera, +1 per published message
  const Frame* frame = nullptr;     // the frame tracked (index, timestamps, sizes)
  std::int64_t publish_unix_us = 0;
  double latency_ms = 0;            // capture -> publish
  double tracker_ms = 0;
  std::string rung = "klt";         // degradation level in force
  std::uint64_t queue_drops = 0;    // frames this camera's queue dropped so far
  const std::vector<TrackPoint>* points = nullptr;  // model pixels
};

// One line of JSON, without the trailing newline, in source-image pixels.
std::string encode_ndjson(const TrackMessage& message);

}  // namespace edgetap::pipeline
