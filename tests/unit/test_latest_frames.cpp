// The live view's latest frames: every frame is kept while someone watches the
// camera, one per interval otherwise (a copy of each tracked frame for nobody
// was the live view's cost on every camera).
#include <gtest/gtest.h>

#include <chrono>

#include "edgetap/camera/latest_frames.hpp"

namespace {

using edgetap::daemon::LatestFrames;

edgetap::pipeline::Frame frame(std::uint64_t index) {
  edgetap::pipeline::Frame f;
  f.width = f.height = 2;
  f.rgb.assign(12, static_cast<std::uint8_t>(index));
  f.index = index;
  return f;
}

}  // namespace

TEST(LatestFrames, UnwatchedKeepsOneFramePerIntervalAndAWatchedCameraEveryFrame) {
  LatestFrames frames(std::chrono::hours(1));  // an interval no test run reaches
  EXPECT_EQ(frames.get("gate"), nullptr);
  frames.put("gate", frame(0), {});
  frames.put("gate", frame(1), {});  // unwatched, within the interval: not copied
  frames.put("door", frame(7), {});  // another camera has its own interval
  EXPECT_EQ(frames.get("door")->frame.index, 7u);
  ASSERT_NE(frames.get("gate"), nullptr);  // the request marks the camera watched...
  EXPECT_EQ(frames.get("gate")->frame.index, 0u);
  frames.put("gate", frame(2), {});
  EXPECT_EQ(frames.get("gate")->frame.index, 2u);  // ...so every frame is kept from then on
  frames.put("gate", frame(3), {{"p", 1.f, 1.f}});
  const auto latest = frames.get("gate");
  EXPECT_EQ(latest->frame.index, 3u);
  ASSERT_EQ(latest->points.size(), 1u);
  EXPECT_EQ(latest->points[0].id, "p");
}
