// Query sampling as in the TAP-Vid reference: query-first takes the first
// visible frame, strided takes every visible point at frames 0, 5, 10, ...;
// unknown frames are never chosen.
#include <gtest/gtest.h>

#include "edgetap/eval/query_sampling.hpp"
#include "metrics_cases.hpp"

using namespace edgetap;
using namespace edgetap::test;

TEST(QuerySampling, FirstVisibleFrameSkipsUnknownAndHiddenFrames) {
  const auto s = one_point(64, 64, 3, {unknown(), hidden(1, 1), unknown(), seen(4, 5), seen(6, 7)});
  ASSERT_TRUE(eval::first_visible_frame(s.points[0]).has_value());
  EXPECT_EQ(*eval::first_visible_frame(s.points[0]), 3);
  const auto never = one_point(64, 64, 0, {hidden(1, 1), unknown()});
  EXPECT_FALSE(eval::first_visible_frame(never.points[0]).has_value());
}

TEST(QuerySampling, QueryFirstUsesTheDeclaredQuery) {
  auto s = one_point(64, 64, 1, {seen(1, 1), seen(2, 3), seen(4, 5)});
  const auto queries = eval::queries_first(s);
  ASSERT_EQ(queries.size(), 1u);
  EXPECT_EQ(queries[0].frame, 1);
  EXPECT_DOUBLE_EQ(queries[0].x, 2);
  EXPECT_DOUBLE_EQ(queries[0].y, 3);
}

TEST(QuerySampling, StridedTakesVisiblePointsEveryStrideFramesInFrameOrder) {
  // Two points over 11 frames; stride 5 looks at frames 0, 5 and 10.
  std::vector<eval::GtSample> a(11, seen(1, 1)), b(11, seen(2, 2));
  a[5] = hidden(1, 1);  // not a query at 5
  b[0] = unknown();     // not a query at 0
  b[10] = seen(9, 8);
  eval::Sequence s = one_point(64, 64, 0, a);
  s.points.push_back(s.points[0]);
  s.points[1].frames = b;
  const auto queries = eval::queries_strided(s, 5);
  ASSERT_EQ(queries.size(), 4u);
  EXPECT_EQ(queries[0].point, 0);  // frame 0: a only
  EXPECT_EQ(queries[0].frame, 0);
  EXPECT_EQ(queries[1].point, 1);  // frame 5: b only
  EXPECT_EQ(queries[1].frame, 5);
  EXPECT_EQ(queries[2].point, 0);  // frame 10: a, then b
  EXPECT_EQ(queries[3].point, 1);
  EXPECT_EQ(queries[3].frame, 10);
  EXPECT_DOUBLE_EQ(queries[3].x, 9);
  EXPECT_DOUBLE_EQ(queries[3].y, 8);
}
