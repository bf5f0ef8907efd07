// The live view's snapshot: a JPEG at the frame's source size, tracks drawn
// where the track socket puts them, visible and occluded ones distinct.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include "edgetap/tracking/track_overlay.hpp"

using namespace edgetap;

namespace {

constexpr int kGrey = 100;

pipeline::Frame grey_frame() {
  pipeline::Frame frame;
  frame.width = 64;
  frame.height = 48;
  frame.source_width = 128;
  frame.source_height = 96;
  frame.rgb.assign(static_cast<std::size_t>(frame.width * frame.height * 3), kGrey);
  return frame;
}

TrackPoint point(const std::string& id, float x, float y, bool visible) {
  TrackPoint p;
  p.id = id;
  p.x = x;
  p.y = y;
  p.visible = visible;
  return p;
}

cv::Mat decoded(const std::vector<std::uint8_t>& jpeg) { return cv::imdecode(jpeg, cv::IMREAD_COLOR); }

// How far a pixel is from the frame's grey (largest channel difference).
int off_grey(const cv::Mat& image, int x, int y) {
  const cv::Vec3b c = image.at<cv::Vec3b>(y, x);
  return std::max({std::abs(c[0] - kGrey), std::abs(c[1] - kGrey), std::abs(c[2] - kGrey)});
}

}  // namespace

TEST(SnapshotJpeg, IsAJpegAtTheSourceSize) {
  const std::vector<std::uint8_t> jpeg = pipeline::snapshot_jpeg(grey_frame(), nullptr);
  ASSERT_GE(jpeg.size(), 4u);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);  // SOI
  const cv::Mat image = decoded(jpeg);
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(image.cols, 128);
  EXPECT_EQ(image.rows, 96);
  int most = 0;
  for (int y = 0; y < image.rows; ++y) {
    for (int x = 0; x < image.cols; ++x) most = std::max(most, off_grey(image, x, y));
  }
  EXPECT_LE(most, 3) << "nothing is drawn without points";
}

TEST(SnapshotJpeg, AVisiblePointIsAFilledDotAnOccludedOneARing) {
  // Model (16, 12) and (48, 36) land on source (32.5, 24.5) and (96.5, 72.5).
  const std::vector<TrackPoint> points = {point("seen", 16, 12, true), point("hidden", 48, 36, false)};
  const cv::Mat image = decoded(pipeline::snapshot_jpeg(grey_frame(), &points));
  ASSERT_FALSE(image.empty());
  EXPECT_GT(off_grey(image, 32, 24), 60) << "the visible point's centre is filled";
  EXPECT_LT(off_grey(image, 96, 72), 30) << "the occluded point's centre is left open";
  int ring = 0;
  for (int d = -4; d <= 4; ++d) ring = std::max({ring, off_grey(image, 96 + d, 72 - 3), off_grey(image, 96 + 3, 72 + d)});
  EXPECT_GT(ring, 40) << "the occluded point's ring is drawn";
  EXPECT_LT(off_grey(image, 64, 48), 10) << "away from the points the frame is untouched";
}
