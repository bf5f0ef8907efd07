// Exponential backoff with jitter for restarting a camera's pipeline: each
// wait is the current delay +-20%, and the delay doubles up to a maximum.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace edgetap::daemon {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, std::uint64_t seed);

  // The wait before the next attempt; doubles the delay for the one after.
  std::chrono::milliseconds next();
  // Back to the initial delay (the source delivered frames again).
  void reset();
  int attempts() const noexcept { return attempts_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds delay_;
  std::mt19937_64 random_;
  int attempts_ = 0;
};

}  // namespace edgetap::daemon
