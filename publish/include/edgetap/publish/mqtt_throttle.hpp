// Which of a camera's messages go to the MQTT broker: every n-th, and at most
// max_rate_hz a second (config::MqttThrottleSettings). One per camera; the
// caller passes the time so tests can drive it without sleeping.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "edgetap/config/config.hpp"

namespace edgetap::daemon {

class MqttThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit MqttThrottle(const config::MqttThrottleSettings& settings) : settings_(settings) {}

  // Whether the message of the frame processed at `now` is sent. The first message always is.
  bool admit(Clock::time_point now);
  std::uint64_t held_back() const noexcept { return held_back_; }
  const config::MqttThrottleSettings& settings() const noexcept { return settings_; }

 private:
  config::MqttThrottleSettings settings_;
  std::uint64_t seen_ = 0;
  std::uint64_t held_back_ = 0;
  std::optional<Clock::time_point> last_sent_;
};

}  // namespace edgetap::daemon
