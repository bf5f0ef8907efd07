#include "edgetap/camera/backoff.hpp"

#include <algorithm>

namespace edgetap::daemon {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, std::uint64_t seed)
    : initial_(initial), max_(max), delay_(initial), random_(seed) {}

std::chrono::milliseconds Backoff::next() {
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  const auto wait = std::chrono::milliseconds(static_cast<long long>(static_cast<double>(delay_.count()) * jitter(random_)));
  delay_ = std::min(delay_ * 2, max_);
  ++attempts_;
  return wait;
}

void Backoff::reset() {
  delay_ = initial_;
  attempts_ = 0;
}

}  // namespace edgetap::daemon
