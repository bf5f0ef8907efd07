// The CUDA engine as a plugin: the loader finds, checks and loads
// libedgetap-cuda.so, and sessions made through it track. CI has no GPU, so a
// stand-in plugin (tests/support/stand_in_cuda_plugin.cpp: the same table over
// the CPU engine) crosses the same module boundary a GPU host's plugin does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "edgetap/backend/cuda_plugin_loader.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/ladder/laddered_tracker.hpp"
#include "support/random_network.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;

namespace {

const std::string kStandIn = EDGETAP_STAND_IN_PLUGIN;
const std::string kOtherVersion = EDGETAP_STAND_IN_PLUGIN_OTHER_VERSION;
const std::string kNoEntry = EDGETAP_STAND_IN_PLUGIN_NO_ENTRY;

std::vector<float> track_moving_square(engine::TrackingSession& session) {
  std::vector<float> out;
  constexpr int kSide = 64;
  for (int t = 0; t < 4; ++t) {
    std::vector<std::uint8_t> rgb(kSide * kSide * 3, 40);
    for (int y = 20; y < 36; ++y) {
      for (int x = 20 + t; x < 36 + t; ++x) rgb[static_cast<std::size_t>(y * kSide + x) * 3] = 220;
    }
    const ImageView frame{rgb.data(), kSide, kSide, kSide * 3};
    EXPECT_TRUE(session.push_frame(frame).is_ok());
    if (t == 0) session.add_tracks(std::vector<engine::Point2>{{24.f, 24.f}, {40.f, 30.f}});
    for (int h = 0; h < 2; ++h) out.insert(out.end(), {session.estimate(h).x, session.estimate(h).y});
  }
  return out;
}

}  // namespace

TEST(CudaPlugin, LoadsAPluginOfThisBuildAndItsSessionsTrackAcrossTheBoundary) {
  const backend::LoadedCudaPlugin loaded = backend::load_cuda_plugin(kStandIn);
  ASSERT_NE(loaded.plugin, nullptr) << loaded.error;
  const kernels::GpuProbe probe = loaded.plugin->probe();
  ASSERT_EQ(probe.devices.size(), 1u);
  EXPECT_EQ(probe.devices[0].name, "stand-in device (CPU engine)");

  test::TempDir dir;
  const auto files = test::write_random_network(dir.path().string(), 7);
  const engine::Network network = engine::load_network(files.weights_path, files.config_path);
  auto through_plugin = loaded.plugin->make_session(true, network, 4, 0);
  engine::StreamingSession here(network);
  EXPECT_EQ(track_moving_square(*through_plugin), track_moving_square(here));
}

TEST(CudaPlugin, RefusesAPluginOfAnotherVersionNamingBoth) {
  const backend::LoadedCudaPlugin loaded = backend::load_cuda_plugin(kOtherVersion);
  EXPECT_EQ(loaded.plugin, nullptr);
  EXPECT_NE(loaded.error.find("version 0.0.0-other"), std::string::npos) << loaded.error;
  EXPECT_NE(loaded.error.find(EDGETAP_VERSION), std::string::npos) << loaded.error;
  EXPECT_NE(loaded.error.find(kOtherVersion), std::string::npos) << loaded.error;
}

TEST(CudaPlugin, RefusesALibraryWithoutTheEntryPoint) {
  const backend::LoadedCudaPlugin loaded = backend::load_cuda_plugin(kNoEntry);
  EXPECT_EQ(loaded.plugin, nullptr);
  EXPECT_NE(loaded.error.find("not an EdgeTAP plugin"), std::string::npos) << loaded.error;
}

TEST(CudaPlugin, AMissingFileIsAClearErrorNotACrash) {
  const backend::LoadedCudaPlugin loaded = backend::load_cuda_plugin("/nonexistent/libedgetap-cuda.so");
  EXPECT_EQ(loaded.plugin, nullptr);
  EXPECT_NE(loaded.error.find("cannot be loaded"), std::string::npos) << loaded.error;
}

TEST(CudaPlugin, TheCandidatesEndWithTheInstalledDirectoryAndTheVariableOverridesThem) {
  unsetenv("EDGETAP_CUDA_PLUGIN");
  const std::vector<std::string> found = backend::cuda_plugin_candidates();
  ASSERT_GE(found.size(), 2u);
  EXPECT_EQ(std::filesystem::path(found.front()).filename(), "libedgetap-cuda.so");
  EXPECT_EQ(found.back(), std::string(EDGETAP_PLUGIN_INSTALL_DIR) + "/libedgetap-cuda.so");
  EXPECT_EQ(std::set<std::string>(found.begin(), found.end()).size(), found.size()) << "a path twice";
  setenv("EDGETAP_CUDA_PLUGIN", "/opt/x/libedgetap-cuda.so", 1);
  EXPECT_EQ(backend::cuda_plugin_candidates(), std::vector<std::string>{"/opt/x/libedgetap-cuda.so"});
  unsetenv("EDGETAP_CUDA_PLUGIN");
}

// The process-wide choice, with the stand-in named in the environment before
// anything asks: the network then "runs on a GPU" and the ladder has its fp16 rungs.
TEST(CudaPlugin, TheProcessUsesThePluginNamedInTheEnvironment) {
  setenv("EDGETAP_CUDA_PLUGIN", kStandIn.c_str(), 1);
  ASSERT_TRUE(backend::have_cuda_engine()) << backend::cuda_plugin().error;
  EXPECT_TRUE(backend::network_on_gpu());
  config::CameraConfig camera;
  camera.tracker = config::TrackerKind::edgetap;
  std::vector<std::string> skipped;
  const auto rungs = pipeline::resolve_ladder(camera, skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_GE(rungs.size(), 2u);
  EXPECT_EQ(rungs[1].precision, config::Precision::fp16);
}
