// The per-camera MQTT throttle, driven with made-up times: every n-th message,
// at most max_rate_hz, both together, and the count of what it held back.
#include <gtest/gtest.h>

#include <vector>

#include "edgetap/publish/mqtt_throttle.hpp"

using edgetap::daemon::MqttThrottle;
using namespace std::chrono_literals;

namespace {

// Which of `count` messages, one every `spacing`, the throttle sends.
std::vector<int> admitted(const edgetap::config::MqttThrottleSettings& settings, int count,
                          MqttThrottle::Clock::duration spacing) {
  MqttThrottle throttle(settings);
  std::vector<int> sent;
  const MqttThrottle::Clock::time_point start{};
  for (int i = 0; i < count; ++i) {
    if (throttle.admit(start + i * spacing)) sent.push_back(i);
  }
  EXPECT_EQ(throttle.held_back(), static_cast<std::uint64_t>(count) - sent.size());
  return sent;
}

}  // namespace

TEST(MqttThrottle, DefaultsSendEverything) {
  EXPECT_EQ(admitted({}, 5, 1ms), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(MqttThrottle, EveryNthStartingWithTheFirst) {
  EXPECT_EQ(admitted({.every_n = 3, .max_rate_hz = 0}, 10, 1ms), (std::vector<int>{0, 3, 6, 9}));
}

TEST(MqttThrottle, MaxRateKeepsTheSpacing) {
  // 30 messages a second, at most 4 a second: one every 250 ms, i.e. every 8th (266 ms) here.
  EXPECT_EQ(admitted({.every_n = 1, .max_rate_hz = 4}, 20, 33333us), (std::vector<int>{0, 8, 16}));
}

TEST(MqttThrottle, BothLimitsTogether) {
  // every 2nd of messages 100 ms apart, at most 3 a second (333 ms): 0, then the next even index at >= 333 ms.
  EXPECT_EQ(admitted({.every_n = 2, .max_rate_hz = 3}, 12, 100ms), (std::vector<int>{0, 4, 8}));
}
