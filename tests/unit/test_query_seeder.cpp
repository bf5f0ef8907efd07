#include <gtest/gtest.h>

#include <cmath>

#include "edgetap/tracking/query_seeder.hpp"
#include "support/textures.hpp"

using namespace edgetap;

namespace {
std::vector<TrackPoint> as_live(const std::vector<Query>& queries) {
  std::vector<TrackPoint> live;
  for (const Query& q : queries) live.push_back({q.id, q.x, q.y, true, 1.f, false});
  return live;
}
}  // namespace

TEST(QuerySeeder, GridAtCellCentresAndReseedsLostSlotsUnderNewIds) {
  config::QuerySettings settings;
  settings.grid_cols = 4;
  settings.grid_rows = 2;
  pipeline::QuerySeeder seeder(settings);
  const pipeline::Frame frame = test::crop_frame(test::random_texture(64, 32, 1), 0, 0, 64, 32, 0);
  const auto first = seeder.seed(frame.view(), 64, 32, {});
  ASSERT_EQ(first.size(), 8u);
  EXPECT_EQ(first[0].id, "g0x0");
  EXPECT_FLOAT_EQ(first[0].x, 7.5f);   // (0 + 0.5) * 64 / 4 - 0.5
  EXPECT_FLOAT_EQ(first[5].y, 23.5f);  // row 1: (1 + 0.5) * 32 / 2 - 0.5
  auto live = as_live(first);
  EXPECT_TRUE(seeder.seed(frame.view(), 64, 32, live).empty());
  live.erase(live.begin() + 2);  // g0x2 lost
  const auto again = seeder.seed(frame.view(), 64, 32, live);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, "g0x2.1");
  EXPECT_FLOAT_EQ(again[0].x, first[2].x);
}

TEST(QuerySeeder, ExplicitPointsMapFromSourcePixels) {
  config::QuerySettings settings;
  settings.policy = config::QueryPolicy::points;
  settings.points = {{"door", 639.5, 0.0}};
  pipeline::QuerySeeder seeder(settings);
  const pipeline::Frame frame = test::crop_frame(test::random_texture(320, 240, 1), 0, 0, 320, 240, 0);
  const auto seeds = seeder.seed(frame.view(), 640, 480, {});
  ASSERT_EQ(seeds.size(), 1u);
  EXPECT_EQ(seeds[0].id, "door");
  EXPECT_FLOAT_EQ(seeds[0].x, 319.5f);  // (639.5 + 0.5) / 2 - 0.5
  EXPECT_FLOAT_EQ(seeds[0].y, -0.25f);
}

TEST(QuerySeeder, FeaturesKeepMinimumDistanceAndTopUp) {
  config::QuerySettings settings;
  settings.policy = config::QueryPolicy::features;
  settings.feature_count = 40;
  settings.feature_min_distance = 10;
  pipeline::QuerySeeder seeder(settings);
  const pipeline::Frame frame = test::crop_frame(test::random_texture(200, 200, 5), 0, 0, 200, 200, 0);
  const auto seeds = seeder.seed(frame.view(), 200, 200, {});
  ASSERT_EQ(seeds.size(), 40u);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    for (std::size_t j = i + 1; j < seeds.size(); ++j) {
      EXPECT_GE(std::hypot(seeds[i].x - seeds[j].x, seeds[i].y - seeds[j].y), 10.f - 1e-3f);
    }
  }
  auto live = as_live(seeds);
  live.resize(20);  // half of them lost
  const auto more = seeder.seed(frame.view(), 200, 200, live);
  EXPECT_EQ(more.size(), 20u);
  EXPECT_EQ(more[0].id, "f40");  // ids never repeat
  for (const Query& q : more) {
    for (const TrackPoint& p : live) EXPECT_GE(std::hypot(q.x - p.x, q.y - p.y), 9.f) << q.id << " near " << p.id;
  }
}

TEST(QuerySeeder, NoReseedSeedsOnce) {
  config::QuerySettings settings;
  settings.grid_cols = settings.grid_rows = 2;
  settings.reseed = false;
  pipeline::QuerySeeder seeder(settings);
  const pipeline::Frame frame = test::crop_frame(test::random_texture(32, 32, 1), 0, 0, 32, 32, 0);
  EXPECT_EQ(seeder.seed(frame.view(), 32, 32, {}).size(), 4u);
  EXPECT_TRUE(seeder.seed(frame.view(), 32, 32, {}).empty());
}

TEST(QuerySeeder, InitialCountIsWhatTheFirstFrameStarts) {
  config::QuerySettings settings;
  settings.grid_cols = 4;
  settings.grid_rows = 3;
  EXPECT_EQ(pipeline::QuerySeeder(settings).initial_count(), 12u);
  const pipeline::Frame frame = test::crop_frame(test::random_texture(96, 96, 3), 0, 0, 96, 96, 0);
  EXPECT_EQ(pipeline::QuerySeeder(settings).seed(frame.view(), 96, 96, {}).size(), 12u);
  settings.policy = config::QueryPolicy::points;
  settings.points = {{"a", 1, 2}, {"b", 3, 4}};
  EXPECT_EQ(pipeline::QuerySeeder(settings).initial_count(), 2u);
  settings.policy = config::QueryPolicy::features;
  settings.feature_count = 40;
  EXPECT_EQ(pipeline::QuerySeeder(settings).initial_count(), 40u);  // at most: the frame decides
}
