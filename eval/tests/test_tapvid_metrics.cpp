// TAP-Vid metrics on hand-computed cases: the strict "<" at each threshold,
// the 256x256 scaling, false positives on occluded frames, unknown frames
// skipped, the query-first and strided frame selection, the per-sequence mean,
// and PCK.
#include <gtest/gtest.h>

#include <cmath>

#include "edgetap/eval/tapvid_metrics.hpp"
#include "metrics_cases.hpp"

using namespace edgetap;
using namespace edgetap::test;

namespace {

constexpr double kExact = 1e-12;

eval::TapVidScores score(const eval::Sequence& s, std::vector<eval::PredSample> track,
                         eval::QueryMode mode = eval::QueryMode::first) {
  const std::vector<eval::QuerySpec> queries = eval::queries_first(s);
  const eval::Predictions predictions{std::move(track)};
  return eval::tapvid_scores(eval::count_tapvid(s, queries, predictions, mode));
}

}  // namespace

TEST(TapVidMetrics, PerfectPredictionScoresOne) {
  const auto s = one_point(256, 256, 0, {seen(10, 10), seen(12, 11), hidden(14, 12), seen(16, 13)});
  const auto r = score(s, {shown_at(10, 10), shown_at(12, 11), occluded_at(14, 12), shown_at(16, 13)});
  EXPECT_NEAR(r.average_jaccard, 1.0, kExact);
  EXPECT_NEAR(r.average_within, 1.0, kExact);
  EXPECT_NEAR(r.occlusion_accuracy, 1.0, kExact);
}

TEST(TapVidMetrics, ThresholdsAreStrict) {
  // Errors of exactly 1 px, exactly 2 px and 0.5 px in frames 1, 2, 3.
  const auto s = one_point(256, 256, 0, {seen(100, 100), seen(100, 100), seen(100, 100), seen(100, 100)});
  const auto r = score(s, {shown_at(100, 100), shown_at(101, 100), shown_at(100, 102), shown_at(100.5, 100)});
  // Within 1: {f3}; within 2: {f1, f3}; within 4, 8, 16: all three.
  EXPECT_NEAR(r.within[0], 1.0 / 3, kExact);
  EXPECT_NEAR(r.within[1], 2.0 / 3, kExact);
  EXPECT_NEAR(r.within[2], 1.0, kExact);
  EXPECT_NEAR(r.average_within, (1.0 / 3 + 2.0 / 3 + 3) / 5, kExact);
  // Jaccard: TP / (3 visible + FP), FP = predicted visible but too far.
  EXPECT_NEAR(r.jaccard[0], 1.0 / (3 + 2), kExact);
  EXPECT_NEAR(r.jaccard[1], 2.0 / (3 + 1), kExact);
  EXPECT_NEAR(r.jaccard[4], 1.0, kExact);
  EXPECT_NEAR(r.average_jaccard, (0.2 + 0.5 + 3) / 5, kExact);
  EXPECT_NEAR(r.occlusion_accuracy, 1.0, kExact);
}

TEST(TapVidMetrics, DistancesAreMeasuredAt256x256) {
  // A 512x128 frame: x distances halve, y distances double.
  const auto s = one_point(512, 128, 0, {seen(50, 50), seen(50, 50), seen(50, 50)});
  // 1.9 px in x is 0.95 at 256 (within 1); 0.5 px in y is 1.0 at 256 (not within 1).
  const auto r = score(s, {shown_at(50, 50), shown_at(51.9, 50), shown_at(50, 50.5)});
  EXPECT_NEAR(r.within[0], 0.5, kExact);
  EXPECT_NEAR(r.within[1], 1.0, kExact);
}

TEST(TapVidMetrics, VisiblePredictionOnOccludedFrameIsAFalsePositive) {
  const auto s = one_point(256, 256, 0, {seen(20, 20), hidden(20, 20), hidden_nowhere(), seen(20, 20)});
  // Spot-on positions, but claimed visible where the point is hidden.
  const auto r = score(s, {shown_at(20, 20), shown_at(20, 20), shown_at(20, 20), shown_at(20, 20)});
  for (double j : r.jaccard) EXPECT_NEAR(j, 1.0 / (1 + 2), kExact);  // 1 TP over 1 visible + 2 FP
  EXPECT_NEAR(r.average_within, 1.0, kExact);                      // only the visible frame counts
  EXPECT_NEAR(r.occlusion_accuracy, 1.0 / 3, kExact);
}

TEST(TapVidMetrics, OccludedPredictionOnVisibleFrameIsNoTruePositive) {
  const auto s = one_point(256, 256, 0, {seen(20, 20), seen(20, 20)});
  const auto r = score(s, {shown_at(20, 20), occluded_at(20, 20)});
  EXPECT_NEAR(r.average_jaccard, 0.0, kExact);
  EXPECT_NEAR(r.average_within, 1.0, kExact);  // position counts whatever the visibility
  EXPECT_NEAR(r.occlusion_accuracy, 0.0, kExact);
}

TEST(TapVidMetrics, UnknownFramesAreNotScored) {
  const auto s = one_point(256, 256, 0, {seen(5, 5), unknown(), seen(5, 5), unknown()});
  // Wild answers on the unknown frames change nothing.
  const std::vector<eval::QuerySpec> queries = eval::queries_first(s);
  const eval::Predictions predictions{{shown_at(5, 5), shown_at(200, 9), shown_at(5, 5), occluded_at(90, 90)}};
  const auto counts = eval::count_tapvid(s, queries, predictions, eval::QueryMode::first);
  EXPECT_EQ(counts.scored, 1);
  const auto r = eval::tapvid_scores(counts);
  EXPECT_NEAR(r.average_jaccard, 1.0, kExact);
  EXPECT_NEAR(r.occlusion_accuracy, 1.0, kExact);
}

TEST(TapVidMetrics, QueryFirstScoresLaterFramesStridedAllButTheQueryFrame) {
  const auto s = one_point(256, 256, 2, {seen(1, 1), seen(1, 1), seen(1, 1), seen(1, 1), seen(1, 1)});
  const std::vector<eval::QuerySpec> queries = eval::queries_first(s);
  // Right after the query, wrong before it.
  const eval::Predictions predictions{
      {shown_at(90, 90), shown_at(90, 90), shown_at(1, 1), shown_at(1, 1), shown_at(1, 1)}};
  const auto first = eval::count_tapvid(s, queries, predictions, eval::QueryMode::first);
  const auto strided = eval::count_tapvid(s, queries, predictions, eval::QueryMode::strided);
  EXPECT_EQ(first.scored, 2);
  EXPECT_EQ(strided.scored, 4);
  EXPECT_NEAR(eval::tapvid_scores(first).average_within, 1.0, kExact);
  EXPECT_NEAR(eval::tapvid_scores(strided).average_within, 0.5, kExact);
}

TEST(TapVidMetrics, DatasetScoreIsTheMeanOfSequenceScores) {
  const auto a = one_point(256, 256, 0, {seen(1, 1), seen(1, 1)});
  const auto b = one_point(256, 256, 0, {seen(1, 1), seen(1, 1), seen(1, 1), seen(1, 1)});
  const auto ra = score(a, {shown_at(1, 1), shown_at(1, 1)});                                 // 1 of 1 within
  const auto rb = score(b, {shown_at(1, 1), shown_at(99, 1), shown_at(99, 1), shown_at(99, 1)});  // 0 of 3
  const std::vector<eval::TapVidScores> both{ra, rb};
  // Not pooled (1 of 4): each sequence weighs the same.
  EXPECT_NEAR(eval::mean_scores(both).average_within, 0.5, kExact);
}

TEST(TapVidMetrics, UndefinedScoresAreNaNAndSkippedInTheMean) {
  const auto none_visible = one_point(256, 256, 0, {seen(1, 1), hidden(1, 1)});
  const auto r = score(none_visible, {shown_at(1, 1), occluded_at(1, 1)});
  EXPECT_TRUE(std::isnan(r.average_within));
  EXPECT_NEAR(r.occlusion_accuracy, 1.0, kExact);
  const auto other = one_point(256, 256, 0, {seen(1, 1), seen(1, 1)});
  const std::vector<eval::TapVidScores> both{r, score(other, {shown_at(1, 1), shown_at(1, 1)})};
  EXPECT_NEAR(eval::mean_scores(both).average_within, 1.0, kExact);
}

TEST(Pck, ThresholdIsStrictAndScaledByTheMaskArea) {
  auto s = one_point(854, 480, 0, {seen(10, 10), seen(10, 10), seen(10, 10), hidden(10, 10), seen(10, 10)});
  s.mask_area = {100, 100, 100, 100, 0};  // 0.2 * sqrt(100) = 2 px; no area in the last frame
  const std::vector<eval::QuerySpec> queries = eval::queries_first(s);
  const eval::Predictions predictions{
      {shown_at(10, 10), shown_at(12, 10), shown_at(11.9, 10), shown_at(10, 10), shown_at(10, 10)}};
  const auto counts = eval::count_pck(s, queries, predictions, eval::QueryMode::first);
  EXPECT_EQ(counts.scored, 2);  // frames 1 and 2: frame 3 is occluded, frame 4 has no area
  EXPECT_EQ(counts.correct, 1);  // exactly 2 px is not below 2 px
  EXPECT_NEAR(eval::pck_score(counts), 0.5, kExact);
}

TEST(Pck, WithoutMaskAreasThereIsNoScore) {
  const auto s = one_point(256, 256, 0, {seen(1, 1), seen(1, 1)});
  const std::vector<eval::QuerySpec> queries = eval::queries_first(s);
  const eval::Predictions predictions{{shown_at(1, 1), shown_at(1, 1)}};
  EXPECT_TRUE(std::isnan(eval::pck_score(eval::count_pck(s, queries, predictions, eval::QueryMode::first))));
}
