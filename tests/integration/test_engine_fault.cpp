// A GPU session that fails mid-stream fails its camera's rung only: the
// camera falls back to the next rung with its track ids and publishes again
// at once, the other camera keeps its rate. CI has no GPU: the stand-in
// plugin (tests/support/stand_in_cuda_plugin.cpp) is loaded as the CUDA
// engine, and the fault hook (backend/fault_injection.hpp) fails the first
// session to reach its 30th frame, the path a CUDA error takes on a GPU host.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/config/load.hpp"
#include "edgetap/daemon/runtime.hpp"
#include "edgetap/ladder/gpu_warm_up.hpp"
#include "edgetap/publish/track_client.hpp"
#include "support/random_network.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using namespace std::chrono_literals;

namespace {

constexpr int kFaultFrame = 30;
// How long a failed camera may go without publishing, and how much of its
// rate the healthy camera may lose meanwhile (2 busy cores run both).
constexpr double kMaxGapAfterFaultS = 2.0;
constexpr double kHealthyRateKept = 0.7;

struct CameraLog {
  std::vector<double> publish_s;     // every message's publish time
  std::vector<std::string> rungs;    // rung of each message
  std::set<std::string> ids_before;  // live ids of its last message on the first rung
  std::set<std::string> ids_after;   // live ids of its first message on another rung
};

}  // namespace

TEST(EngineFault, AFailingGpuSessionFailsItsCamerasRungOnlyAndTheCameraPublishesAgainAtOnce) {
  setenv("EDGETAP_CUDA_PLUGIN", EDGETAP_STAND_IN_PLUGIN, 1);
  setenv("EDGETAP_INJECT_CUDA_FAULT", std::to_string(kFaultFrame).c_str(), 1);
  ASSERT_TRUE(backend::network_on_gpu()) << backend::probe_gpus().reason;

  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 11);
  const std::string camera = "source: 'test:pinwheel?width=160&height=120&fps=30', tracker: edgetap, edgetap: {model: '" +
                             files.weights_path + "'}";
  daemon::Runtime runtime(config::load_string(
      "publisher: {socket: '" + dir.file("t.sock") + "'}\n"
      "defaults: {model_size: [64, 64], queries: {grid: [3, 3]}, budget_ms: 5000}\n"
      "cameras:\n  - {name: a, " + camera + "}\n  - {name: b, " + camera + "}\n",
      "t.yaml", "/"));
  std::string error;
  ASSERT_TRUE(runtime.start(error)) << error;
  pipeline::TrackClient client;
  ASSERT_TRUE(client.connect(dir.file("t.sock"), error)) << error;

  std::map<std::string, CameraLog> logs;
  const auto until = std::chrono::steady_clock::now() + 12s;
  while (std::chrono::steady_clock::now() < until) {
    const auto line = client.read_line(5000ms);
    ASSERT_TRUE(line) << "no message for 5 s";
    const auto m = nlohmann::json::parse(*line);
    CameraLog& log = logs[m["camera"].get<std::string>()];
    const std::string rung = m["rung"];
    std::set<std::string> live;
    for (const auto& p : m["points"]) {
      if (!p["lost"].get<bool>()) live.insert(p["id"].get<std::string>());
    }
    if (!log.rungs.empty() && rung != log.rungs.front() && log.ids_after.empty()) log.ids_after = live;
    if (log.rungs.empty() || rung == log.rungs.front()) log.ids_before = live;
    log.rungs.push_back(rung);
    log.publish_s.push_back(static_cast<double>(m["publish_us"].get<std::int64_t>()) / 1e6);
  }
  const auto stats = runtime.stats();
  runtime.stop();

  ASSERT_EQ(stats.size(), 2u);
  const int failed = stats[0].rung_failures == 1 ? 0 : 1, healthy = 1 - failed;
  ASSERT_EQ(stats[failed].rung_failures, 1u) << "one camera took the fault";
  EXPECT_EQ(stats[healthy].rung_failures, 0u);
  EXPECT_EQ(stats[healthy].rung_index, 0);
  EXPECT_EQ(stats[failed].rung_index, 1);
  EXPECT_EQ(stats[failed].state, daemon::CameraState::running);

  // The failed camera moved to its next rung with the same tracks and kept publishing.
  const CameraLog& f = logs[stats[failed].name];
  ASSERT_FALSE(f.ids_after.empty()) << "no message on the fallback rung";
  EXPECT_EQ(f.ids_after, f.ids_before);
  double longest_gap = 0;
  for (std::size_t i = 1; i < f.publish_s.size(); ++i) longest_gap = std::max(longest_gap, f.publish_s[i] - f.publish_s[i - 1]);
  EXPECT_LT(longest_gap, kMaxGapAfterFaultS);

  // The healthy camera's rate before the fault (its first message to the failed camera's
  // last on the first rung) and after it.
  const CameraLog& h = logs[stats[healthy].name];
  std::size_t last_first_rung = 0;
  while (last_first_rung + 1 < f.rungs.size() && f.rungs[last_first_rung + 1] == f.rungs.front()) ++last_first_rung;
  const double fault_s = f.publish_s[last_first_rung];
  ASSERT_GT(h.publish_s.size(), 20u);
  const auto before = std::count_if(h.publish_s.begin(), h.publish_s.end(), [&](double t) { return t <= fault_s; });
  const auto after = static_cast<std::ptrdiff_t>(h.publish_s.size()) - before;
  ASSERT_GT(before, 5) << "the fault came before the healthy camera ran";
  const double rate_before = static_cast<double>(before) / (fault_s - h.publish_s.front());
  const double rate_after = static_cast<double>(after) / (h.publish_s.back() - fault_s);
  EXPECT_GE(rate_after, kHealthyRateKept * rate_before) << rate_before << " messages/s before the fault, " << rate_after
                                                        << " after";
}

// The process's first GPU set-up is paid before the cameras capture: the first
// camera with an edgetap rung has it built and tracking a point through one frame;
// a configuration of klt cameras builds nothing.
TEST(GpuWarmUp, BuildsTheFirstEdgetapRungAndTracksAPointThroughOneFrame) {
  setenv("EDGETAP_CUDA_PLUGIN", EDGETAP_STAND_IN_PLUGIN, 1);
  ASSERT_TRUE(backend::network_on_gpu()) << backend::probe_gpus().reason;
  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 11);
  const config::Config config = config::load_string(
      "defaults: {model_size: [64, 64]}\n"
      "cameras:\n  - {name: k, source: 'test:ball', tracker: klt}\n"
      "  - {name: e, source: 'test:ball', tracker: edgetap, edgetap: {model: '" + files.weights_path + "'}}\n",
      "t.yaml", "/");
  pipeline::ModelCache models;
  const pipeline::GpuWarmUp warm_up = pipeline::warm_up_gpu(config.cameras, models);
  ASSERT_NE(warm_up.tracker, nullptr);
  EXPECT_GE(warm_up.ms, 0);
  EXPECT_EQ(warm_up.tracker->size(), 1u);

  const config::Config klt_only = config::load_string("cameras:\n  - {name: k, source: 'test:ball', tracker: klt}\n", "k.yaml", "/");
  EXPECT_EQ(pipeline::warm_up_gpu(klt_only.cameras, models).tracker, nullptr);
}
