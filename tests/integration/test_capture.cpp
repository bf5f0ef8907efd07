// Real GStreamer capture into the klt tracker: a live videotestsrc pattern
// scrolling at a known speed, a video file the test encodes itself, and a real
// RTSP server. Each checks that tracked points move the known distance.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/capture/capture.hpp"
#include "edgetap/ladder/track_session.hpp"
#include "support/rtsp_server.hpp"
#include "support/temp_dir.hpp"
#include "support/textures.hpp"
#include "support/video_writer.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

// Median per-frame motion of tracked points may differ from the known motion by this much (model px).
constexpr double kMotionTolerancePx = 0.25;

struct Motion {
  double dx = 0, dy = 0;
  std::size_t samples = 0;
  std::uint64_t frames = 0;
  std::vector<std::uint64_t> indices;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

config::CameraConfig camera_from_yaml(const std::string& yaml, const std::string& base_dir = "/") {
  return config::load_string("cameras:\n  - " + yaml + "\n", "test.yaml", base_dir).cameras.at(0);
}

// Captures up to `max_frames` frames of `camera`, tracks them and measures the
// median per-frame displacement of tracks between consecutive observations.
Motion measure_motion(const config::CameraConfig& camera, std::uint64_t max_frames, std::chrono::seconds timeout) {
  pipeline::FrameQueue queue(64, camera.capture.pace == config::Pace::fast ? pipeline::FrameQueue::Overflow::block
                                                                           : pipeline::FrameQueue::Overflow::drop_oldest);
  pipeline::Capture capture(camera, queue, daemon::make_logger("capture"));
  pipeline::ModelCache models;
  std::vector<std::string> skipped;
  std::string error;
  const std::unique_ptr<pipeline::TrackSession> built = pipeline::TrackSession::build(camera, models, skipped, error);
  EXPECT_TRUE(built) << error;
  if (!built) return {};
  pipeline::TrackSession& session = *built;
  EXPECT_TRUE(capture.start(error)) << error;
  struct Seen { std::uint64_t index; float x, y; };
  std::map<std::string, Seen> last;
  std::vector<double> dxs, dys;
  Motion motion;
  std::vector<TrackPoint> points;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (motion.frames < max_frames && std::chrono::steady_clock::now() < deadline) {
    auto frame = queue.pop(200ms);
    if (!frame) {
      if (queue.closed()) break;
      continue;
    }
    EXPECT_TRUE(session.process(*frame, points).is_ok());
    ++motion.frames;
    motion.indices.push_back(frame->index);
    for (const TrackPoint& p : points) {
      if (p.lost) continue;
      if (auto it = last.find(p.id); it != last.end() && frame->index > it->second.index) {
        const double gap = static_cast<double>(frame->index - it->second.index);
        dxs.push_back((p.x - it->second.x) / gap);
        dys.push_back((p.y - it->second.y) / gap);
      }
      last[p.id] = {frame->index, p.x, p.y};
    }
  }
  capture.stop();
  motion.dx = median(dxs);
  motion.dy = median(dys);
  motion.samples = dxs.size();
  return motion;
}

}  // namespace

TEST(Capture, LiveTestPatternScrollsAtItsKnownSpeed) {
  // pinwheel scrolled 2 px/frame to the left at 320x240, tracked at 160x120: -1 px/frame.
  const auto camera = camera_from_yaml(
      "{name: live, tracker: klt, source: 'test:pinwheel?width=320&height=240&fps=30&speed=2', model_size: [160, 120],"
      " queries: {policy: features, features: {count: 60, min_distance: 6}}}");
  const Motion m = measure_motion(camera, 45, 20s);
  ASSERT_GE(m.frames, 45u);
  ASSERT_GE(m.samples, 200u);
  EXPECT_NEAR(m.dx, -1.0, kMotionTolerancePx);
  EXPECT_NEAR(m.dy, 0.0, kMotionTolerancePx);
}

TEST(Capture, EncodedVideoFileDecodesAndIsTracked) {
  test::TempDir dir;
  const cv::Mat texture = test::random_texture(640, 480, 11);
  std::vector<pipeline::Frame> frames;
  // The crop moves (+4, +2) px per frame at 320x240: content moves (-4, -2),
  // which is (-2, -1) at the 160x120 model size.
  for (int t = 0; t < 30; ++t) frames.push_back(test::crop_frame(texture, 40 + 4 * t, 60 + 2 * t, 320, 240, t));
  const std::string path = dir.file("moving.avi");
  ASSERT_EQ(test::write_mjpeg_avi(path, frames, 30), "");

  const auto camera = camera_from_yaml(
      "{name: file, tracker: klt, source: 'file://moving.avi', model_size: [160, 120], capture: {pace: fast, at_eof: stop},"
      " queries: {grid: [8, 6]}}",
      dir.path().string());
  const Motion m = measure_motion(camera, 1000, 30s);
  // Every frame arrives, in order, once: a fast file never drops.
  ASSERT_EQ(m.frames, 30u);
  for (std::uint64_t i = 0; i < m.indices.size(); ++i) EXPECT_EQ(m.indices[i], i);
  EXPECT_NEAR(m.dx, -2.0, kMotionTolerancePx);
  EXPECT_NEAR(m.dy, -1.0, kMotionTolerancePx);
}

TEST(Capture, RtspStreamFromARealServerIsTracked) {
  test::RtspServer server;
  const auto camera = camera_from_yaml("{name: ipcam, tracker: klt, source: '" + server.url() +
                                       "', model_size: [320, 240],"
                                       " queries: {policy: features, features: {count: 60, min_distance: 8}}}");
  const Motion m = measure_motion(camera, 30, 30s);
  ASSERT_GE(m.frames, 30u);
  EXPECT_NEAR(m.dx, -2.0, kMotionTolerancePx);
  EXPECT_NEAR(m.dy, 0.0, kMotionTolerancePx);
}

TEST(Capture, PipelineDescriptionsPerSourceKind) {
  const auto live = camera_from_yaml("{name: a, tracker: klt, source: 'test:ball?fps=5', model_size: [64, 48]}");
  EXPECT_EQ(pipeline::pipeline_description(live),
            "videotestsrc is-live=true pattern=ball horizontal-speed=0 ! video/x-raw,width=640,height=480,framerate=5/1"
            " ! videoconvert name=convert ! videoscale add-borders=false ! video/x-raw,format=RGB,width=64,height=48,"
            "pixel-aspect-ratio=1/1 ! appsink name=sink max-buffers=1 drop=false sync=true");
  const auto file = camera_from_yaml("{name: b, tracker: klt, source: 'file:///a \"b\".mp4', capture: {pace: fast}}");
  const std::string d = pipeline::pipeline_description(file);
  EXPECT_NE(d.find("filesrc location=\"/a \\\"b\\\".mp4\" ! decodebin"), std::string::npos) << d;
  EXPECT_NE(d.find("sync=false"), std::string::npos) << d;
}

TEST(Capture, FileLoopsAtEndWhenAsked) {
  test::TempDir dir;
  const cv::Mat texture = test::random_texture(200, 120, 3);
  std::vector<pipeline::Frame> frames;
  for (int t = 0; t < 8; ++t) frames.push_back(test::crop_frame(texture, t, 0, 160, 120, t));
  ASSERT_EQ(test::write_mjpeg_avi(dir.file("short.avi"), frames, 30), "");
  const auto camera = camera_from_yaml(
      "{name: loop, tracker: klt, source: 'file://short.avi', model_size: [80, 60], capture: {pace: fast, at_eof: loop}}",
      dir.path().string());
  // Three times the file's length arrives: the file was played again from the start.
  const Motion m = measure_motion(camera, 24, 30s);
  EXPECT_EQ(m.frames, 24u);
}
