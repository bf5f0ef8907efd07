// Ladders and governors for the ladder's tests: square cameras and klt rungs
// of a given size, and a governor that judges within a few frames.
#pragma once

#include "edgetap/config/config.hpp"

namespace edgetap::test {

// Judges from the first frame, over 10 frames; down after 5 over budget, up after 30 with headroom.
inline config::GovernorSettings quick_governor() {
  config::GovernorSettings g;
  g.window = 10;
  g.down_after = 5;
  g.up_after = 30;
  g.min_dwell_s = 0;
  g.warmup_frames = 0;
  return g;
}

inline config::CameraConfig camera_at(int size) {
  config::CameraConfig c;
  c.model_width = c.model_height = size;
  return c;
}

// A klt rung at size x size (a test's factory decides what it really builds).
inline config::Rung rung(int size, int max_points = 0) {
  config::Rung r;
  r.tracker = config::TrackerKind::klt;
  r.width = r.height = size;
  r.max_points = max_points;
  return r;
}

}  // namespace edgetap::test
