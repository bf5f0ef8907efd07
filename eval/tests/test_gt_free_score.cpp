// Ground-truth-free scores with klt on drawn clips: a still clip is perfectly
// cycle-consistent and every track is static; noise shows up as jitter; a
// moving clip has no static tracks.
#include <gtest/gtest.h>

#include <cmath>

#include "edgetap/eval/gt_free_score.hpp"
#include "edgetap/eval/tracker_registry.hpp"
#include "fixtures.hpp"

using namespace edgetap;

namespace {

std::vector<cv::Mat> still_clip(int frames, double noise_sigma) {
  const cv::Mat base = test::smooth_texture(128, 128, 11);
  std::vector<cv::Mat> out;
  cv::RNG rng(5);
  for (int t = 0; t < frames; ++t) {
    cv::Mat f;
    base.convertTo(f, CV_32FC3);
    if (noise_sigma > 0) {
      cv::Mat n(f.size(), CV_32FC3);
      rng.fill(n, cv::RNG::NORMAL, 0.0, noise_sigma);
      f += n;
    }
    f.convertTo(f, CV_8UC3);
    out.push_back(f);
  }
  return out;
}

std::vector<cv::Mat> panning_clip(int frames) {
  const cv::Mat wide = test::smooth_texture(256, 128, 12);
  std::vector<cv::Mat> out;
  for (int t = 0; t < frames; ++t) out.push_back(wide(cv::Rect(2 * t, 0, 128, 128)).clone());
  return out;
}

}  // namespace

TEST(GtFreeScore, StillClipIsCycleConsistentAndStatic) {
  eval::GtFreeOptions options;
  options.grid = 8;
  const auto r = eval::score_without_ground_truth("still", still_clip(10, 0), eval::tracker_factory("klt", eval::FrameSize{}), options);
  EXPECT_EQ(r.seeded, 64);
  EXPECT_EQ(r.kept_forward, 64);
  EXPECT_EQ(r.kept_cycle, 64);
  EXPECT_LT(r.cycle_median_px, 0.05);
  EXPECT_DOUBLE_EQ(r.cycle_consistent, 1.0);
  EXPECT_EQ(r.static_tracks, 64);
  EXPECT_LT(r.jitter_rms_px, 0.05);
}

TEST(GtFreeScore, NoiseShowsUpAsJitter) {
  eval::GtFreeOptions options;
  options.grid = 8;
  const auto clean = eval::score_without_ground_truth("clean", still_clip(10, 0), eval::tracker_factory("klt", eval::FrameSize{}), options);
  const auto noisy = eval::score_without_ground_truth("noisy", still_clip(10, 8), eval::tracker_factory("klt", eval::FrameSize{}), options);
  ASSERT_GT(noisy.static_tracks, 0);
  EXPECT_GT(noisy.jitter_rms_px, clean.jitter_rms_px + 0.01);
}

TEST(GtFreeScore, MovingClipHasNoStaticTracks) {
  eval::GtFreeOptions options;
  options.grid = 8;
  const auto r = eval::score_without_ground_truth("pan", panning_clip(12), eval::tracker_factory("klt", eval::FrameSize{}), options);
  EXPECT_GT(r.kept_forward, 0);
  EXPECT_EQ(r.static_tracks, 0);
  EXPECT_TRUE(std::isnan(r.jitter_rms_px));
  EXPECT_LT(r.cycle_median_px, 0.5);
}
