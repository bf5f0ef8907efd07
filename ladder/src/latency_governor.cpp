#include "edgetap/ladder/latency_governor.hpp"

#include <algorithm>
#include <cmath>
#include <spdlog/fmt/fmt.h>

namespace edgetap::pipeline {

LatencyGovernor::LatencyGovernor(const config::GovernorSettings& settings, double budget_ms, int rungs)
    : settings_(settings),
      budget_ms_(budget_ms),
      rungs_(std::max(rungs, 1)),
      warmup_left_(settings.warmup_frames),
      failures_(static_cast<std::size_t>(rungs_), 0),
      broken_(static_cast<std::size_t>(rungs_), false) {}

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
  over_ = headroom_ = 0;
  window_.clear();  // the new rung is judged on its own frames, after its set-up
  next_ = 0;
  warmup_left_ = settings_.warmup_frames;
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

  if (over_ >= settings_.down_after && rung_ + 1 < rungs_) {
    const int from = rung_;
    ++failures_[static_cast<std::size_t>(from)];
    move_to(from + 1, now_s);
    return Change{from, rung_, fmt::format("p{} latency {:.1f} ms over the {:.0f} ms budget for {} frames",
                                           settings_.percentile, p, budget_ms_, settings_.down_after)};
  }
  // Stepping up to a rung that failed k times needs 2^k times the headroom streak.
  if (rung_ > 0 && !broken_[static_cast<std::size_t>(rung_ - 1)]) {
    const int failed = failures_[static_cast<std::size_t>(rung_ - 1)];
    const long needed = static_cast<long>(settings_.up_after) << std::min(failed, 20);
    if (headroom_ >= needed) {
      const int from = rung_;
      move_to(from - 1, now_s);
      return Change{from, rung_, fmt::format("p{} latency {:.1f} ms below {:.0f}% of the {:.0f} ms budget for {} frames",
                                             settings_.percentile, p, 100 * settings_.headroom, budget_ms_, needed)};
    }
  }
  return std::nullopt;
}

}  // namespace edgetap::pipeline
