#include "edgetap/ladder/engine_info.hpp"

#include <opencv2/core/version.hpp>

#include <filesystem>

#include "edgetap/ladder/laddered_tracker.hpp"

namespace edgetap::pipeline {

const char* to_string(Backend backend) noexcept { return backend == Backend::cuda ? "cuda" : "cpu"; }

EngineInfo engine_info(const config::Rung& rung, const config::CameraConfig& camera, ModelCache& models, bool gpu) {
  EngineInfo info;
  info.rung = rung_name(rung, camera);
  if (rung.tracker == config::TrackerKind::klt) {  // OpenCV's pyramidal Lucas-Kanade, in float on the CPU
    info.model = "klt";
    info.model_version = "opencv-" CV_VERSION;
    return info;
  }
  const std::string path = !rung.model.empty()            ? rung.model
                           : !camera.edgetap.model.empty() ? camera.edgetap.model
                                                           : bundled_model_path();
  info.model = std::filesystem::path(path).stem().string();
  std::string error;
  const auto network = models.get(path, error);
  info.model_version = network ? network->config.version : "unknown";
  info.backend = gpu ? Backend::cuda : Backend::cpu;
  info.precision = rung.precision;
  return info;
}

nlohmann::json engine_json(const EngineInfo& engine) {
  return {{"model", engine.model},
          {"model_version", engine.model_version},
          {"backend", to_string(engine.backend)},
          {"precision", config::to_string(engine.precision)},
          {"rung", engine.rung}};
}

}  // namespace edgetap::pipeline
