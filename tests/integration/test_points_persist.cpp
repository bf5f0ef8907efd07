// Points added over the control socket with control.state_file set survive a
// restart and a reload: the state file holds them, a new runtime's camera tracks
// the same ids again, and remove_points takes them out of the file for good.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/control_commands.hpp"
#include "edgetap/daemon/control_server.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/points_state.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

struct PersistFixture : ::testing::Test {
  test::TempDir dir;
  std::unique_ptr<daemon::Runtime> runtime;
  std::unique_ptr<daemon::ControlServer> control;
  std::unique_ptr<pipeline::TrackClient> client;
  std::mutex seen_mutex;
  std::set<std::string> seen;  // ids tracked (not lost) by the current runtime

  std::string yaml(const std::string& grid = "[4, 4]") const {
    return "publisher: {socket: '" + dir.file("t.sock") + "'}\ncontrol: {state_file: '" + dir.file("points.json") +
           "'}\ncameras:\n"
           "  - {name: gate, source: 'test:pinwheel?width=160&height=120&fps=30', model_size: [80, 60],"
           " tracker: klt, queries: {grid: " + grid + "}}\n";
  }

  void start_daemon() {
    {
      std::lock_guard lock(seen_mutex);
      seen.clear();
    }
    auto observers = [this](const config::CameraConfig&) -> daemon::FrameObserver {
      return [this](const pipeline::Frame&, const std::vector<TrackPoint>& points) {
        std::lock_guard lock(seen_mutex);
        for (const TrackPoint& p : points) {
          if (!p.lost) seen.insert(p.id);
        }
      };
    };
    runtime = std::make_unique<daemon::Runtime>(config::load_string(yaml(), "t.yaml", dir.path().string()), observers);
    std::string error;
    ASSERT_TRUE(runtime->start(error)) << error;
    control = std::make_unique<daemon::ControlServer>(
        dir.file("control.sock"), [this](const json& r) { return daemon::handle_control_request(*runtime, r); },
        daemon::make_logger("control"));
    ASSERT_TRUE(control->start(error)) << error;
    client = std::make_unique<pipeline::TrackClient>();
    ASSERT_TRUE(client->connect(dir.file("control.sock"), error)) << error;
  }
  void stop_daemon() {
    client.reset();
    if (control) control->stop();
    if (runtime) runtime->stop();
    control.reset();
    runtime.reset();
  }
  void TearDown() override { stop_daemon(); }

  json ask(const json& request) {
    if (!client->send_line(request.dump())) return json();
    const std::string reply = client->read_line(5000ms).value_or("");
    return reply.empty() ? json() : json::parse(reply);
  }
  void wait_for_a_tracked_frame() {
    for (int i = 0; i < 400 && runtime->stats()[0].frames_tracked == 0; ++i) std::this_thread::sleep_for(25ms);
    ASSERT_GT(runtime->stats()[0].frames_tracked, 0u);
  }
  // Whether every id in `ids` is tracked, waiting for frames (a bound, not a timing claim).
  bool tracked(const std::set<std::string>& ids) {
    for (int i = 0; i < 400; ++i) {
      {
        std::lock_guard lock(seen_mutex);
        if (std::includes(seen.begin(), seen.end(), ids.begin(), ids.end())) return true;
      }
      std::this_thread::sleep_for(25ms);
    }
    return false;
  }
  bool ever_tracked(const std::string& id) {
    std::lock_guard lock(seen_mutex);
    return seen.count(id) > 0;
  }
  daemon::PointsByCamera state_file() {
    std::ifstream in(dir.file("points.json"));
    std::ostringstream text;
    text << in.rdbuf();
    daemon::PointsByCamera points;
    std::string error;
    EXPECT_TRUE(daemon::parse_points_state(text.str(), points, error)) << error << "\n" << text.str();
    return points;
  }
};

}  // namespace

TEST_F(PersistFixture, AddedPointsAreTrackedAgainAfterARestartUntilRemoved) {
  start_daemon();
  wait_for_a_tracked_frame();
  const json added = ask({{"cmd", "add_points"},
                          {"camera", "gate"},
                          {"points", {{{"id", "door"}, {"x", 40.5}, {"y", 30}}, {{"id", "bin"}, {"x", 100}, {"y", 80}}}}});
  ASSERT_EQ(added.value("ok", false), true) << added;
  ASSERT_EQ(added["added"], json({"door", "bin"})) << added;
  // As the operator gave them, in source pixels.
  const daemon::PointsByCamera both = {{"gate", {{"door", 40.5, 30}, {"bin", 100, 80}}}};
  EXPECT_EQ(state_file(), both);

  stop_daemon();
  start_daemon();
  EXPECT_TRUE(tracked({"door", "bin"})) << "the restarted camera does not track the saved points";
  EXPECT_EQ(state_file(), both);

  const json removed = ask({{"cmd", "remove_points"}, {"camera", "gate"}, {"ids", {"door"}}});
  ASSERT_EQ(removed.value("ok", false), true) << removed;
  EXPECT_EQ(state_file(), (daemon::PointsByCamera{{"gate", {{"bin", 100, 80}}}}));

  stop_daemon();
  start_daemon();
  EXPECT_TRUE(tracked({"bin"}));
  EXPECT_FALSE(ever_tracked("door"));
}

TEST_F(PersistFixture, ACameraRestartedByAReloadTracksItsSavedPointsAgain) {
  start_daemon();
  wait_for_a_tracked_frame();
  const json added = ask({{"cmd", "add_points"}, {"camera", "gate"}, {"points", {{{"id", "door"}, {"x", 40}, {"y", 30}}}}});
  ASSERT_EQ(added["added"], json({"door"})) << added;

  daemon::ReloadSummary summary;
  std::string error;
  ASSERT_TRUE(runtime->apply(config::load_string(yaml("[3, 3]"), "t.yaml", dir.path().string()), summary, error))
      << error;
  ASSERT_EQ(summary.restarted, std::vector<std::string>{"gate"}) << summary.to_string();
  {
    std::lock_guard lock(seen_mutex);
    seen.clear();
  }
  EXPECT_TRUE(tracked({"door"})) << "the camera restarted by the reload does not track the saved point";
}
