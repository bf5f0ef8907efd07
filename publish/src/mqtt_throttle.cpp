#include "edgetap/publish/mqtt_throttle.hpp"

namespace edgetap::daemon {

bool MqttThrottle::admit(Clock::time_point now) {
  const bool nth = seen_++ % static_cast<std::uint64_t>(settings_.every_n) == 0;
  const bool rate_ok = settings_.max_rate_hz <= 0 || !last_sent_ ||
                       now - *last_sent_ >= std::chrono::duration<double>(1.0 / settings_.max_rate_hz);
  if (!nth || !rate_ok) {
    ++held_back_;
    return false;
  }
  last_sent_ = now;
  return true;
}

}  // namespace edgetap::daemon
