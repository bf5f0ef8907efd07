// The klt tracker on frames with known motion (no GStreamer): a textured
// image translating by a known sub-pixel-free amount per frame.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "edgetap/tracking/klt_tracker.hpp"
#include "support/textures.hpp"

using namespace edgetap;

namespace {

// Tolerance for a known translation tracked over one frame (model pixels).
constexpr float kMotionTolerancePx = 0.2f;

std::vector<Query> grid_queries(int n, int width, int height) {
  std::vector<Query> queries;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      queries.push_back({"p" + std::to_string(r * n + c), (c + 0.5f) * width / n, (r + 0.5f) * height / n});
    }
  }
  return queries;
}

}  // namespace

TEST(KltTracker, FollowsAKnownTranslation) {
  const cv::Mat texture = test::random_texture(480, 360, 7);
  pipeline::KltTracker tracker(config::KltSettings{});
  const auto queries = grid_queries(8, 256, 192);
  tracker.add_queries(queries);
  std::vector<TrackPoint> out;
  // The crop moves (+3, +2) per frame, so content moves (-3, -2).
  for (int t = 0; t < 10; ++t) {
    const pipeline::Frame frame = test::crop_frame(texture, 100 + 3 * t, 80 + 2 * t, 256, 192, t);
    ASSERT_TRUE(tracker.push_frame(frame.view(), out).is_ok());
    int tracked = 0;
    for (const TrackPoint& p : out) {
      if (p.lost) continue;
      const auto q = std::find_if(queries.begin(), queries.end(), [&](const Query& x) { return x.id == p.id; });
      ASSERT_NE(q, queries.end());
      const float ex = q->x - 3.f * t, ey = q->y - 2.f * t;
      ++tracked;
      // Within half a window of the border LK sees a partial window: not checked.
      if (ex < 11 || ey < 11 || ex > 256 - 12 || ey > 192 - 12) continue;
      EXPECT_NEAR(p.x, q->x - 3.f * t, kMotionTolerancePx * (t + 1)) << p.id << " frame " << t;
      EXPECT_NEAR(p.y, q->y - 2.f * t, kMotionTolerancePx * (t + 1)) << p.id << " frame " << t;
    }
    // Points leaving the frame are lost; the rest must survive.
    EXPECT_GE(tracked, 40) << "frame " << t;
  }
}

TEST(KltTracker, LosesPointsOnAnUnrelatedFrame) {
  pipeline::KltTracker tracker(config::KltSettings{});
  tracker.add_queries(grid_queries(6, 160, 120));
  std::vector<TrackPoint> out;
  const pipeline::Frame a = test::crop_frame(test::random_texture(160, 120, 1), 0, 0, 160, 120, 0);
  const pipeline::Frame b = test::crop_frame(test::random_texture(160, 120, 2), 0, 0, 160, 120, 1);
  ASSERT_TRUE(tracker.push_frame(a.view(), out).is_ok());
  ASSERT_TRUE(tracker.push_frame(b.view(), out).is_ok());
  const auto lost = std::count_if(out.begin(), out.end(), [](const TrackPoint& p) { return p.lost; });
  // Forward-backward consistency rejects nearly every point of a new scene.
  EXPECT_GE(lost, 30) << "of " << out.size();
  EXPECT_EQ(tracker.size(), out.size() - static_cast<std::size_t>(lost));
}

TEST(KltTracker, AddAndRemoveQueriesKeepIds) {
  pipeline::KltTracker tracker(config::KltSettings{});
  const cv::Mat texture = test::random_texture(200, 200, 3);
  std::vector<TrackPoint> out;
  tracker.add_queries(std::vector<Query>{{"a", 50, 50}, {"b", 100, 100}});
  ASSERT_TRUE(tracker.push_frame(test::crop_frame(texture, 0, 0, 160, 160, 0).view(), out).is_ok());
  tracker.add_queries(std::vector<Query>{{"c", 80, 40}});
  EXPECT_EQ(tracker.remove_queries(std::vector<std::string>{"a", "zzz"}), 1u);
  ASSERT_TRUE(tracker.push_frame(test::crop_frame(texture, 1, 0, 160, 160, 1).view(), out).is_ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "b");
  EXPECT_EQ(out[1].id, "c");
  EXPECT_NEAR(out[1].x, 79.f, kMotionTolerancePx);
}

TEST(KltTracker, RejectsAnEmptyFrame) {
  pipeline::KltTracker tracker(config::KltSettings{});
  std::vector<TrackPoint> out;
  EXPECT_EQ(tracker.push_frame(ImageView{}, out).code(), Status::Code::bad_frame);
}
