// What runs a camera: the engine of a rung (model, its version, backend,
// precision, rung name) and how stats and /metrics show it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "edgetap/daemon/health.hpp"
#include "edgetap/ladder/engine_info.hpp"
#include "edgetap/ladder/laddered_tracker.hpp"

using namespace edgetap;

namespace {

config::CameraConfig edgetap_camera() {
  config::CameraConfig camera;
  camera.name = "gate";
  camera.tracker = config::TrackerKind::edgetap;
  camera.model_width = camera.model_height = 256;
  return camera;
}

std::string declared_version(const std::string& json_path) {
  std::ifstream in(json_path);
  return nlohmann::json::parse(in).at("version").get<std::string>();
}

daemon::CameraStats stats_with_engine() {
  daemon::CameraStats stats;
  stats.name = "gate";
  stats.state = daemon::CameraState::running;
  stats.rung = "edgetap-fp16-192x192-i2";
  stats.rung_index = 1;
  pipeline::EngineInfo engine;
  engine.model = "edgetap-small";
  engine.model_version = "edgetap-v5";
  engine.backend = pipeline::Backend::cuda;
  engine.precision = config::Precision::fp16;
  engine.rung = stats.rung;
  stats.engine = engine;
  return stats;
}

}  // namespace

TEST(EngineInfo, AKltRungRunsOpenCvOnTheCpu) {
  config::CameraConfig camera = edgetap_camera();
  config::Rung rung;
  rung.tracker = config::TrackerKind::klt;
  rung.stride = 2;
  pipeline::ModelCache models;
  const pipeline::EngineInfo info = pipeline::engine_info(rung, camera, models, true);
  EXPECT_EQ(info.model, "klt");
  EXPECT_EQ(info.model_version.rfind("opencv-", 0), 0u) << info.model_version;
  EXPECT_EQ(info.backend, pipeline::Backend::cpu);
  EXPECT_EQ(info.rung, "klt-s2");
}

TEST(EngineInfo, ANetworkRungNamesItsWeightsAndTheVersionTheyDeclare) {
  const config::CameraConfig camera = edgetap_camera();
  config::Rung rung;
  rung.width = rung.height = 192;
  rung.iters = 2;
  pipeline::ModelCache models;
  const pipeline::EngineInfo cpu = pipeline::engine_info(rung, camera, models, false);
  EXPECT_EQ(cpu.model, "edgetap-small");
  EXPECT_EQ(cpu.model_version, declared_version(EDGETAP_SOURCE_DIR "/models/edgetap-small.json"));
  EXPECT_EQ(cpu.backend, pipeline::Backend::cpu);
  EXPECT_EQ(cpu.precision, config::Precision::fp32);
  EXPECT_EQ(cpu.rung, "edgetap-fp32-192x192-i2");

  rung.precision = config::Precision::fp16;
  rung.model = EDGETAP_SOURCE_DIR "/models/edgetap-large.safetensors";
  const pipeline::EngineInfo gpu = pipeline::engine_info(rung, camera, models, true);
  EXPECT_EQ(gpu.model, "edgetap-large");
  EXPECT_EQ(gpu.model_version, declared_version(EDGETAP_SOURCE_DIR "/models/edgetap-large.json"));
  EXPECT_EQ(gpu.backend, pipeline::Backend::cuda);
  EXPECT_EQ(gpu.precision, config::Precision::fp16);
  EXPECT_EQ(gpu.rung, "edgetap-large-fp16-192x192-i2");
}

TEST(EngineInfo, AModelThatCannotLoadHasAnUnknownVersion) {
  config::CameraConfig camera = edgetap_camera();
  camera.edgetap.model = "/nonexistent/mine.safetensors";
  pipeline::ModelCache models;
  const pipeline::EngineInfo info = pipeline::engine_info(config::Rung{}, camera, models, false);
  EXPECT_EQ(info.model, "mine");
  EXPECT_EQ(info.model_version, "unknown");
}

TEST(EngineInfo, StatsJsonCarriesTheEngine) {
  const nlohmann::json j = daemon::camera_json(stats_with_engine());
  EXPECT_EQ(j["engine"], nlohmann::json({{"model", "edgetap-small"},
                                         {"model_version", "edgetap-v5"},
                                         {"backend", "cuda"},
                                         {"precision", "fp16"},
                                         {"rung", "edgetap-fp16-192x192-i2"}}));
  daemon::CameraStats failed;
  failed.name = "broken";
  EXPECT_TRUE(daemon::camera_json(failed)["engine"].is_null());
}

TEST(EngineInfo, MetricsCarryBuildAndEngineInfoAndTheRungAsALabel) {
  daemon::Snapshot snapshot;
  snapshot.cameras.push_back(stats_with_engine());
  daemon::CameraStats failed;
  failed.name = "broken";
  snapshot.cameras.push_back(failed);
  const std::string text = daemon::format_prometheus(snapshot);
  EXPECT_NE(text.find("edgetap_build_info{version=\"" EDGETAP_VERSION "\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("edgetap_engine_info{camera=\"gate\",model=\"edgetap-small\",model_version=\"edgetap-v5\","
                      "backend=\"cuda\",precision=\"fp16\",rung=\"edgetap-fp16-192x192-i2\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("edgetap_engine_info{camera=\"broken\""), std::string::npos) << "a camera without a tracker";
  EXPECT_NE(text.find("edgetap_rung{camera=\"gate\",rung=\"edgetap-fp16-192x192-i2\"} 1\n"), std::string::npos) << text;
}

TEST(EngineInfo, LabelValuesAreEscaped) {
  daemon::CameraStats stats = stats_with_engine();
  stats.engine->model = "my \"best\"\\model\n";
  daemon::Snapshot snapshot;
  snapshot.cameras.push_back(stats);
  const std::string text = daemon::format_prometheus(snapshot);
  EXPECT_NE(text.find("model=\"my \\\"best\\\"\\\\model\\n\""), std::string::npos) << text;
}
