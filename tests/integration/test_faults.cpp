// One failing camera never stops the others: a missing file and an unreachable
// RTSP URL each fail with a clear error while a healthy camera keeps publishing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

// `expected_state`: files fail for good, live sources keep reconnecting.
void expect_failure_isolated(const std::string& bad_source, const std::string& expected_error,
                             daemon::CameraState expected_state) {
  test::TempDir dir;
  const std::string yaml = "publisher: {socket: '" + dir.file("t.sock") +
                           "'}\ncameras:\n"
                           "  - {name: healthy, tracker: klt, source: 'test:pinwheel?width=160&height=120&fps=30', model_size: [80, 60],"
                           " queries: {grid: [4, 4]}}\n"
                           "  - {name: broken, tracker: klt, source: '" + bad_source + "', capture: {retry: {initial_ms: 100}}}\n";
  daemon::Runtime runtime(config::load_string(yaml, "t.yaml", dir.path().string()));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  pipeline::TrackClient client;
  ASSERT_TRUE(client.connect(dir.file("t.sock"), error)) << error;

  // Wait for the broken camera to fail.
  daemon::CameraStats broken;
  for (int i = 0; i < 150; ++i) {
    broken = runtime.stats()[1];
    if (broken.state == expected_state && !broken.error.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(broken.state, expected_state);
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
  EXPECT_EQ(runtime.stats()[0].state, daemon::CameraState::running);
  runtime.stop();
}

}  // namespace

TEST(Faults, MissingFileFailsAloneWithAClearError) {
  expect_failure_isolated("file:///nonexistent/clip.mp4", "/nonexistent/clip.mp4", daemon::CameraState::failed);
}

TEST(Faults, UnreachableRtspFailsAloneWithAClearError) {
  // Port 9 on loopback: nothing listens, the connection is refused.
  expect_failure_isolated("rtsp://127.0.0.1:9/stream", "rtsp://127.0.0.1:9/stream", daemon::CameraState::reconnecting);
}

TEST(Faults, RtspCameraRecoversAfterTheServerRestarts) {
  test::TempDir dir;
  auto server = std::make_unique<test::ChildProcess>(std::vector<std::string>{EDGETAP_TEST_RTSP_SERVER});
  const int port = std::stoi(server->first_line().substr(5));  // "PORT <n>"
  const std::string url = "rtsp://127.0.0.1:" + std::to_string(port) + "/test";
  const std::string yaml = "publisher: {socket: '" + dir.file("t.sock") +
                           "'}\ndefaults: {model_size: [80, 60], queries: {grid: [4, 4]}}\ncameras:\n"
                           "  - {name: steady, tracker: klt, source: 'test:pinwheel?width=160&height=120&fps=30'}\n"
                           "  - {name: ipcam, tracker: klt, source: '" + url +
                           "', capture: {retry: {initial_ms: 200, max_ms: 1000}, stall_timeout_s: 2}}\n";
  daemon::Runtime runtime(config::load_string(yaml, "t.yaml", dir.path().string()));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  auto tracked = [&](std::size_t camera) { return runtime.stats()[camera].frames_tracked; };
  auto wait_until = [&](auto condition, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
    return condition();
  };
  ASSERT_TRUE(wait_until([&] { return tracked(1) >= 10; }, 20s)) << "the RTSP camera never delivered frames";

  server.reset();  // the server process is killed: the camera notices (error or stall) and retries
  ASSERT_TRUE(wait_until([&] { return runtime.stats()[1].state == daemon::CameraState::reconnecting; }, 20s))
      << "state " << runtime.stats()[1].state;
  const auto steady_before = tracked(0);
  std::this_thread::sleep_for(1s);
  EXPECT_GT(tracked(0), steady_before + 5) << "the other camera stalled while the RTSP camera was down";

  // Back on the same address.
  server = std::make_unique<test::ChildProcess>(std::vector<std::string>{EDGETAP_TEST_RTSP_SERVER, std::to_string(port)});
  const auto ipcam_before = tracked(1);
  ASSERT_TRUE(wait_until([&] { return tracked(1) >= ipcam_before + 10; }, 30s))
      << "tracks did not resume after the server came back: " << runtime.stats()[1].error;
  EXPECT_EQ(runtime.stats()[1].state, daemon::CameraState::running);
  EXPECT_GE(runtime.stats()[1].reconnects, 1u);
  runtime.stop();
}
