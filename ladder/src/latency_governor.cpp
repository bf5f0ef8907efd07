#include "edgetap/ladder/latency_governor.hpp"

#include <algorithm>
#include <cmath>
#include <spdlog/fmt/fmt.h>

namespace edgetap::pipeline {

LatencyGovernor::LatencyGovernor(const config::GovernorSettings& settings, double budget_ms, int rungs,
                                 GovernorPeers* peers)
    : settings_(settings),
      budget_ms_(budget_ms),
      rungs_(std::max(rungs, 1)),
      warmup_left_(settings.warmup_frames),
      failures_(static_cast<std::size_t>(rungs_), 0),
      broken_(static_cast<std::size_t>(rungs_), false),
      peers_(peers),
      peer_changes_seen_(peers != nullptr ? peers->changes() : 0) {}

LatencyGovernor::~LatencyGovernor() {
  if (peers_ != nullptr) peers_->withdraw(ticket_);
}

double LatencyGovernor::percentile_ms() const {
  if (window_.empty()) return 0;
  std::vector<double> sorted = window_;
  const auto rank = static_cast<std::size_t>(
      std::ceil(settings_.percentile / 100.0 * static_cast<double>(sorted.size())) - 1);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
  return sorted[rank];
}

void LatencyGovernor::move_to(int rung, double now_s) {
  rung_ = rung;
  last_change_s_ = now_s;
  start_window();  // the new rung is judged on its own frames, after its set-up
  warmup_left_ = settings_.warmup_frames;
}

void LatencyGovernor::start_window() {
  over_ = headroom_ = 0;
  window_.clear();
  next_ = 0;
}

int LatencyGovernor::rung_below() const {
  for (int r = rung_ + 1; r < rungs_; ++r) {
    if (!broken_[static_cast<std::size_t>(r)]) return r;
  }
  return -1;
}

bool LatencyGovernor::may_change(double now_s) {
  if (peers_ == nullptr) return true;
  if (!peers_->claim_change(ticket_, now_s)) return false;
  peer_changes_seen_ = peers_->changes();
  return true;
}

void LatencyGovernor::rung_failed(int failed, int now_on, double now_s) {
  if (failed >= 0 && failed < rungs_) broken_[static_cast<std::size_t>(failed)] = true;
  move_to(std::clamp(now_on, 0, rungs_ - 1), now_s);
}

std::optional<LatencyGovernor::Change> LatencyGovernor::observe(double latency_ms, double now_s) {
  if (warmup_left_ > 0) {
    --warmup_left_;
    return std::nullopt;
  }
  if (peers_ != nullptr && peers_->changes() != peer_changes_seen_) {
    peer_changes_seen_ = peers_->changes();
    start_window();  // another camera changed rung: the load these latencies measured is gone
  }
  const auto size = static_cast<std::size_t>(settings_.window);
  if (window_.size() < size) {
    window_.push_back(latency_ms);
  } else {
    window_[next_] = latency_ms;
    next_ = (next_ + 1) % size;
  }
  const double p = percentile_ms();
  over_ = p > budget_ms_ ? over_ + 1 : 0;
  headroom_ = p < settings_.headroom * budget_ms_ ? headroom_ + 1 : 0;
  if (now_s - last_change_s_ < settings_.min_dwell_s) return std::nullopt;

  const int below = rung_below();
  const bool down = over_ >= settings_.down_after && below >= 0;
  // Stepping up to a rung that failed k times needs 2^k times the headroom streak.
  long needed = 0;
  bool up = false;
  if (rung_ > 0 && !broken_[static_cast<std::size_t>(rung_ - 1)]) {
    needed = static_cast<long>(settings_.up_after) << std::min(failures_[static_cast<std::size_t>(rung_ - 1)], 20);
    up = headroom_ >= needed;
  }
  if (!down && !up) {
    // Within budget: no change wanted, no place kept among the peers. Over it,
    // with too few frames yet (the window starts again after a peer's change),
    // the place is kept until it expires.
    if (peers_ != nullptr && over_ == 0) peers_->withdraw(ticket_);
    return std::nullopt;
  }
  if (!may_change(now_s)) return std::nullopt;
  const int from = rung_;
  if (down) {
    ++failures_[static_cast<std::size_t>(from)];
    move_to(below, now_s);
    return Change{from, rung_, fmt::format("p{} latency {:.1f} ms over the {:.0f} ms budget for {} frames",
                                           settings_.percentile, p, budget_ms_, settings_.down_after)};
  }
  move_to(from - 1, now_s);
  return Change{from, rung_, fmt::format("p{} latency {:.1f} ms below {:.0f}% of the {:.0f} ms budget for {} frames",
                                         settings_.percentile, p, 100 * settings_.headroom, budget_ms_, needed)};
}

}  // namespace edgetap::pipeline
