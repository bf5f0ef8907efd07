// The per-camera latency governor: compares a percentile of recent capture ->
// publish latencies with the camera's budget and moves along the degradation
// ladder. Down after `down_after` frames in a row over budget; up after
// `up_after` frames in a row below headroom * budget; never sooner than
// `min_dwell_s` after the last change. A rung that had to be left for being
// over budget waits twice as long before it is tried again (each time), so a
// load right at the budget cannot make the governor oscillate. The first
// `warmup_frames` frames after the start and after every change are not
// judged: they pay the new rung's set-up, not its steady cost. A rung whose
// tracker failed is never stepped up to again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"

namespace edgetap::pipeline {

class LatencyGovernor {
 public:
  struct Change {
    int from = 0, to = 0;
    std::string reason;
  };

  LatencyGovernor(const config::GovernorSettings& settings, double budget_ms, int rungs);

  // Records one frame's latency at time `now_s` (seconds, any monotonic origin).
  std::optional<Change> observe(double latency_ms, double now_s);
  // The ladder left rung `failed` for `now_on` by itself (its tracker failed):
  // follows it there and never steps up to `failed` again.
  void rung_failed(int failed, int now_on, double now_s);
  int rung() const noexcept { return rung_; }
  // The percentile over the current window (0 before any frame).
  double percentile_ms() const;

 private:
  void move_to(int rung, double now_s);

  config::GovernorSettings settings_;
  double budget_ms_;
  int rungs_;
  int rung_ = 0;
  std::vector<double> window_;  // ring of recent latencies
  std::size_t next_ = 0;
  int over_ = 0, headroom_ = 0;
  double last_change_s_ = -1e300;
  int warmup_left_ = 0;         // frames still to pass before judging the rung in force
  std::vector<int> failures_;   // per rung: times it was left for being over budget
  std::vector<bool> broken_;    // per rung: its tracker failed
};

}  // namespace edgetap::pipeline
