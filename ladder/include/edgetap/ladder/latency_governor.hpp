// The per-camera latency governor: compares a percentile of recent capture ->
// publish latencies with the camera's budget and moves along the degradation
// ladder. Down after `down_after` frames in a row over budget; up after
// `up_after` frames in a row below headroom * budget; never sooner than
// `min_dwell_s` after the last change. A rung that had to be left for being
// over budget waits twice as long before it is tried again (each time), so a
// load right at the budget cannot make the governor oscillate. The first
// `warmup_frames` frames after the start and after every change are not
// judged: they pay the new rung's set-up, not its steady cost. A rung whose
// tracker failed is never stepped up (or down) to again. With `peers`, the
// camera's changes are spaced from the other cameras' and its window starts
// again after theirs (governor_peers.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/ladder/governor_peers.hpp"

namespace edgetap::pipeline {

class LatencyGovernor {
 public:
  struct Change {
    int from = 0, to = 0;
    std::string reason;
  };

  // `peers` (may be null: the camera alone) must outlive the governor.
  LatencyGovernor(const config::GovernorSettings& settings, double budget_ms, int rungs,
                  GovernorPeers* peers = nullptr);
  ~LatencyGovernor();
  LatencyGovernor(const LatencyGovernor&) = delete;
  LatencyGovernor& operator=(const LatencyGovernor&) = delete;

  // Records one frame's latency at time `now_s` (seconds, any monotonic origin).
  std::optional<Change> observe(double latency_ms, double now_s);
  // The ladder left rung `failed` for `now_on` by itself (its tracker failed),
  // or could not move to it (`now_on` is where it stayed): follows it there
  // and never moves to `failed` again.
  void rung_failed(int failed, int now_on, double now_s);
  int rung() const noexcept { return rung_; }
  // The percentile over the current window (0 before any frame).
  double percentile_ms() const;

 private:
  void move_to(int rung, double now_s);
  void start_window();
  // The first rung below the one in force whose tracker has not failed; -1 if none.
  int rung_below() const;
  // Whether the other cameras let this one change now (always, without peers).
  bool may_change(double now_s);

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
  GovernorPeers* peers_ = nullptr;
  std::uint64_t peer_changes_seen_ = 0;
  GovernorPeers::Ticket ticket_ = 0;  // this camera's place among the peers waiting to change
};

}  // namespace edgetap::pipeline
