// What runs a camera's rung in force: the model (its name and the version its
// weights declare), the backend (CPU or CUDA), the precision and the rung's
// name. Shown in the track socket's hello, in the control socket's stats and
// as the edgetap_engine_info metric.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/ladder/tracker_factory.hpp"

namespace edgetap::pipeline {

enum class Backend { cpu, cuda };

const char* to_string(Backend backend) noexcept;

struct EngineInfo {
  std::string model;          // the weights file's name without extension (edgetap-small), or "klt"
  std::string model_version;  // the version the weights' .json declares (edgetap-small-v5); OpenCV's for klt
  Backend backend = Backend::cpu;
  config::Precision precision = config::Precision::fp32;
  std::string rung;           // as messages name it (rung_name)
  bool operator==(const EngineInfo&) const = default;
};

// What `rung` of `camera` runs, for a process whose network does (`gpu`) or
// does not run on a GPU. The network's version is read through `models` (a
// model the rung's tracker holds is not loaded again); a model that cannot be
// loaded gives the version "unknown".
EngineInfo engine_info(const config::Rung& rung, const config::CameraConfig& camera, ModelCache& models, bool gpu);

// {"model", "model_version", "backend", "precision", "rung"}
nlohmann::json engine_json(const EngineInfo& engine);

}  // namespace edgetap::pipeline
