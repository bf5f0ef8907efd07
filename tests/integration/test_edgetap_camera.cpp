// The edgetap tracker inside the daemon's runtime: a camera running the
// network (a small random-weight one: the trained model is not needed to check
// the plumbing) publishes tracks; a camera whose model file is missing,
// truncated or mismatched fails alone with a clear error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/random_network.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

std::string config_with_model(const test::TempDir& dir, const std::string& model) {
  return "publisher: {socket: '" + dir.file("t.sock") + "'}\n"
         "defaults: {model_size: [64, 64], queries: {grid: [3, 3]}}\n"
         "cameras:\n"
         "  - {name: net, source: 'test:pinwheel?width=160&height=120&fps=30', tracker: edgetap,"
         " edgetap: {model: '" + model + "'}}\n"
         "  - {name: plain, tracker: klt, source: 'test:ball?width=160&height=120&fps=30'}\n";
}

// Runs the configuration until `messages` messages arrived; returns the cameras seen and the last 'net' message.
std::set<std::string> run_and_listen(daemon::Runtime& runtime, const test::TempDir& dir, int messages,
                                     nlohmann::json& last_net) {
  std::string error;
  EXPECT_TRUE(runtime.start(error)) << error;
  pipeline::TrackClient client;
  EXPECT_TRUE(client.connect(dir.file("t.sock"), error)) << error;
  std::set<std::string> cameras;
  for (int i = 0; i < messages; ++i) {
    const auto line = client.read_line(5000ms);
    if (!line) break;
    const auto m = nlohmann::json::parse(*line);
    cameras.insert(m["camera"].get<std::string>());
    if (m["camera"] == "net") last_net = m;
  }
  return cameras;
}

// Runs config_with_model() with `ladder` on the 'net' camera, which must fail at start
// while 'plain' runs; returns the failed camera's error.
std::string ladder_start_error(const test::TempDir& dir, const std::string& weights, const std::string& ladder) {
  std::string yaml = config_with_model(dir, weights);
  const std::string net_end = "edgetap: {model: '" + weights + "'}";
  yaml.replace(yaml.find(net_end), net_end.size(), net_end + ", ladder: " + ladder);
  daemon::Runtime runtime(config::load_string(yaml, "t.yaml", "/"));
  nlohmann::json net;
  const auto cameras = run_and_listen(runtime, dir, 10, net);
  EXPECT_EQ(cameras, std::set<std::string>{"plain"});
  const auto stats = runtime.stats();
  EXPECT_EQ(stats[0].state, daemon::CameraState::failed);
  EXPECT_EQ(stats[1].state, daemon::CameraState::running);
  runtime.stop();
  return stats[0].error;
}

// Starts a configuration whose first camera cannot meet its budget and reads its
// messages until it reaches klt; returns the rungs in the order they were in force.
// Every track alive before a switch must be alive after it, under the same id.
std::vector<std::string> rungs_walked_down(daemon::Runtime& runtime, const test::TempDir& dir) {
  std::string error;
  EXPECT_TRUE(runtime.start(error)) << error;
  pipeline::TrackClient client;
  EXPECT_TRUE(client.connect(dir.file("t.sock"), error)) << error;
  std::vector<std::string> rungs;
  std::set<std::string> alive_before;
  for (int i = 0; i < 300 && (rungs.empty() || rungs.back() != "klt"); ++i) {
    const auto line = client.read_line(5000ms);
    if (!line) {
      ADD_FAILURE() << "no message after rungs " << testing::PrintToString(rungs);
      break;
    }
    const auto m = nlohmann::json::parse(*line);
    const std::string rung = m["rung"];
    std::set<std::string> alive;
    for (const auto& p : m["points"]) {
      if (!p["lost"].get<bool>()) alive.insert(p["id"].get<std::string>());
    }
    if (!rungs.empty() && rung != rungs.back()) {
      for (const std::string& id : alive_before) EXPECT_TRUE(alive.count(id)) << id << " lost on " << rungs.back() << " -> " << rung;
    }
    if (rungs.empty() || rung != rungs.back()) rungs.push_back(rung);
    alive_before = alive;
  }
  return rungs;
}

// One over-budget camera on the random network with the given ladder.
std::string busy_camera(const test::TempDir& dir, const std::string& model, const std::string& ladder) {
  return "publisher: {socket: '" + dir.file("t.sock") + "'}\n"
         "cameras:\n"
         "  - name: busy\n"
         "    source: 'test:pinwheel?width=160&height=120&fps=30&speed=1'\n"
         "    model_size: [256, 256]\n"
         "    queries: {grid: [3, 3]}\n"
         "    tracker: edgetap\n"
         "    edgetap: {model: '" + model + "'}\n"
         "    budget_ms: 1\n"
         "    ladder: " + ladder + "\n"
         "    governor: {window: 5, down_after: 3, min_dwell_s: 0, warmup_frames: 0}\n";
}

}  // namespace

TEST(EdgetapCamera, NetworkTrackerPublishesTracks) {
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  daemon::Runtime runtime(config::load_string(config_with_model(dir, files.weights_path), "t.yaml", "/"));
  nlohmann::json net;
  const auto cameras = run_and_listen(runtime, dir, 60, net);
  EXPECT_EQ(cameras, (std::set<std::string>{"net", "plain"}));
  ASSERT_FALSE(net.is_null());
  ASSERT_EQ(net["points"].size(), 9u);
  for (const auto& p : net["points"]) {
    EXPECT_TRUE(std::isfinite(p["x"].get<double>()));
    EXPECT_FALSE(p["lost"].get<bool>());  // the network keeps occluded points instead of losing them
  }
  EXPECT_EQ(runtime.stats()[0].state, daemon::CameraState::running);
}

TEST(EdgetapCamera, BadModelFilesFailOnlyTheirCamera) {
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  // Truncated weights, and weights whose configuration disagrees with them.
  const std::string truncated = dir.file("truncated.safetensors");
  std::filesystem::copy_file(files.weights_path, truncated);
  std::filesystem::copy_file(files.config_path, dir.file("truncated.json"));
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 100);
  const std::string mismatched = dir.file("mismatched.safetensors");
  std::filesystem::copy_file(files.weights_path, mismatched);
  auto config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["width"] = 24;
  std::ofstream(dir.file("mismatched.json")) << config.dump();

  for (const auto& [model, expected] : std::vector<std::pair<std::string, std::string>>{
           {dir.file("absent.safetensors"), "no file " + dir.file("absent.safetensors")},
           {truncated, "truncated"},
           {mismatched, "has shape"}}) {
    daemon::Runtime runtime(config::load_string(config_with_model(dir, model), "t.yaml", "/"));
    nlohmann::json net;
    const auto cameras = run_and_listen(runtime, dir, 10, net);
    EXPECT_EQ(cameras, std::set<std::string>{"plain"}) << model;
    const auto stats = runtime.stats();
    EXPECT_EQ(stats[0].state, daemon::CameraState::failed) << model;
    EXPECT_NE(stats[0].error.find(model), std::string::npos) << stats[0].error;
    EXPECT_NE(stats[0].error.find(expected), std::string::npos) << stats[0].error;
    EXPECT_EQ(stats[1].state, daemon::CameraState::running);
    runtime.stop();
  }
}

TEST(EdgetapCamera, ARungWithMoreIterationsThanTheModelFailsItsCameraAtStart) {
  // The random network has 2 refinement iterations; the ladder's second rung asks for 3.
  // The camera fails when it starts, naming the rung, not later at its first switch.
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  const std::string error = ladder_start_error(
      dir, files.weights_path, "[{tracker: edgetap}, {tracker: edgetap, size: [32, 32], iters: 3}, {tracker: klt}]");
  EXPECT_NE(error.find("ladder rung edgetap-fp32-32x32-i3"), std::string::npos) << error;
  EXPECT_NE(error.find("iters 3 is more than"), std::string::npos) << error;
  EXPECT_NE(error.find("2 refinement iterations"), std::string::npos) << error;
}

TEST(EdgetapCamera, OverBudgetCameraStepsDownTheLadderKeepingTrackIds) {
  // A budget no tracker meets: the governor walks the ladder down to klt, and
  // every track alive before a switch is alive after it, under the same id. The
  // network's rungs are 256 and 192 px so that each takes several ms even on a fast
  // machine (at 96 / 64 px they took under the 1 ms minimum budget on one).
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  daemon::Runtime runtime(config::load_string(
      busy_camera(dir, files.weights_path,
                  "[{tracker: edgetap, size: [256, 256]}, {tracker: edgetap, size: [192, 192], iters: 1}, {tracker: klt}]"),
      "t.yaml", "/"));
  const std::vector<std::string> rungs = rungs_walked_down(runtime, dir);
  EXPECT_EQ(rungs, (std::vector<std::string>{"edgetap-fp32-256x256", "edgetap-fp32-192x192-i1", "klt"}));
  EXPECT_EQ(runtime.stats()[0].rung, "klt");
  EXPECT_EQ(runtime.stats()[0].rung_changes, 2u);
}

TEST(EdgetapCamera, ARungCanRunAModelOfItsOwn) {
  // The camera's model on the first rung, a second network (a file of its own, named
  // relative to the configuration's folder) on the second: the walk down passes through
  // both, keeping the track ids, and the rung names say which network ran.
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  std::filesystem::create_directories(dir.file("second"));
  test::write_random_network(dir.file("second"), 4);
  daemon::Runtime runtime(config::load_string(
      busy_camera(dir, files.weights_path,
                  "[{size: [256, 256]}, {model: second/tiny.safetensors, size: [192, 192], iters: 1}, {tracker: klt}]"),
      "t.yaml", dir.path().string()));
  const std::vector<std::string> rungs = rungs_walked_down(runtime, dir);
  EXPECT_EQ(rungs, (std::vector<std::string>{"edgetap-fp32-256x256", "edgetap-tiny-fp32-192x192-i1", "klt"}));
}

TEST(EdgetapCamera, ARungWhoseModelCannotLoadFailsItsCameraAtStart) {
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 3);
  const std::string absent = dir.file("absent.safetensors");
  const std::string error = ladder_start_error(
      dir, files.weights_path, "[{tracker: edgetap}, {model: '" + absent + "', size: [32, 32]}, {tracker: klt}]");
  EXPECT_NE(error.find("ladder rung edgetap-absent-fp32-32x32"), std::string::npos) << error;
  EXPECT_NE(error.find(absent), std::string::npos) << error;
}
