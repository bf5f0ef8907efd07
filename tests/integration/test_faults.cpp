// One failing camera never stops the others: a missing file and an unreachable
// RTSP URL each fail with a clear error while a healthy camera keeps publishing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/pipeline/track_client.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

void expect_failure_isolated(const std::string& bad_source, const std::string& expected_error) {
  test::TempDir dir;
  const std::string yaml = "publisher: {socket: '" + dir.file("t.sock") +
                           "'}\ncameras:\n"
                           "  - {name: healthy, source: 'test:pinwheel?width=160&height=120&fps=30', model_size: [80, 60],"
                           " queries: {grid: [4, 4]}}\n"
                           "  - {name: broken, source: '" + bad_source + "'}\n";
  daemon::Runtime runtime(config::load_string(yaml, "t.yaml", dir.path().string()));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  pipeline::TrackClient client;
  ASSERT_TRUE(client.connect(dir.file("t.sock"), error)) << error;

  // Wait for the broken camera to fail.
  daemon::CameraStats broken;
  for (int i = 0; i < 150; ++i) {
    broken = runtime.stats()[1];
    if (broken.state == "failed") break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(broken.state, "failed");
  EXPECT_NE(broken.error.find(expected_error), std::string::npos) << broken.error;

  // The healthy camera keeps publishing after the failure.
  const auto before = runtime.stats()[0].frames_tracked;
  std::set<std::string> cameras;
  int messages = 0;
  for (int i = 0; i < 200 && messages < 20; ++i) {
    if (auto line = client.read_line(1000ms)) {
      cameras.insert(nlohmann::json::parse(*line)["camera"].get<std::string>());
      ++messages;
    }
  }
  EXPECT_EQ(messages, 20);
  EXPECT_EQ(cameras, std::set<std::string>{"healthy"});
  EXPECT_GT(runtime.stats()[0].frames_tracked, before);
  EXPECT_EQ(runtime.stats()[0].state, "running");
  runtime.stop();
}

}  // namespace

TEST(Faults, MissingFileFailsAloneWithAClearError) {
  expect_failure_isolated("file:///nonexistent/clip.mp4", "/nonexistent/clip.mp4");
}

TEST(Faults, UnreachableRtspFailsAloneWithAClearError) {
  // Port 9 on loopback: nothing listens, the connection is refused.
  expect_failure_isolated("rtsp://127.0.0.1:9/stream", "rtsp://127.0.0.1:9/stream");
}
