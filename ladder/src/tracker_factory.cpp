#include "edgetap/ladder/tracker_factory.hpp"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/tracking/data_files.hpp"
#include "edgetap/tracking/klt_tracker.hpp"

namespace edgetap::pipeline {

std::string bundled_model_path() {
  return find_data_file("models/edgetap-small.safetensors", "models/edgetap-small.safetensors");
}

std::string bundled_large_model_path() {
  return find_data_file("models/edgetap-large.safetensors", "models/edgetap-large.safetensors");
}

std::shared_ptr<const engine::Network> ModelCache::get(const std::string& weights_path, std::string& error) {
  std::lock_guard lock(mutex_);
  if (auto network = loaded_[weights_path].lock()) return network;
  const std::string config_path = std::filesystem::path(weights_path).replace_extension(".json").string();
  if (!std::filesystem::exists(weights_path)) {  // named first: the loader opens the .json first
    error = "cannot load the edgetap model: no file " + weights_path;
    return nullptr;
  }
  try {
    auto network = std::make_shared<const engine::Network>(engine::load_network(weights_path, config_path));
    loaded_[weights_path] = network;
    return network;
  } catch (const engine::ModelError& e) {
    error = "cannot load the edgetap model " + weights_path + ": " + e.what();
  } catch (const std::exception& e) {
    // The loader reports what it checks as ModelError; anything else (a failed allocation, a
    // library's own exception) still fails this camera only, never the daemon.
    error = "cannot load the edgetap model " + weights_path + " (" + config_path + "): unexpected error: " + e.what();
  }
  return nullptr;
}

namespace {

// The network's session: on the GPU where one can be used, in the rung's
// precision; on the CPU otherwise (FP32 only).
std::unique_ptr<engine::TrackingSession> make_session(const engine::Network& network,
                                                      const config::EdgeTapSettings& settings) {
  using backend::EngineKind;
  backend::Publishing publishing;
  publishing.refine = settings.template_refinement;
  if (settings.visible_threshold) publishing.visible_threshold = static_cast<float>(*settings.visible_threshold);
  publishing.support_grid = settings.support_grid;
  if (backend::network_on_gpu()) {
    const EngineKind kind =
        settings.precision == config::Precision::fp16 ? EngineKind::cuda_fp16 : EngineKind::cuda_fp32;
    return backend::make_session(kind, network, settings.iters, publishing);
  }
  if (settings.precision != config::Precision::fp32) {
    throw std::invalid_argument(std::string(config::to_string(settings.precision)) + " needs a CUDA device");
  }
  return backend::make_session(EngineKind::cpu, network, settings.iters, publishing);
}

}  // namespace

TrackerSpec tracker_spec(const config::CameraConfig& camera) {
  return {camera.tracker, camera.klt, camera.edgetap, camera.model_width, camera.model_height};
}

TrackerSpec tracker_spec(const config::CameraConfig& camera, const config::Rung& rung) {
  TrackerSpec spec{rung.tracker, camera.klt, camera.edgetap, rung.width, rung.height};
  spec.edgetap.iters = rung.iters;
  spec.edgetap.precision = rung.precision;
  if (rung.template_refinement) spec.edgetap.template_refinement = *rung.template_refinement;
  if (!rung.model.empty()) spec.edgetap.model = rung.model;
  return spec;
}

std::unique_ptr<Tracker> make_tracker(const config::CameraConfig& camera, ModelCache& models, std::string& error) {
  return make_tracker(tracker_spec(camera), models, error);
}

std::unique_ptr<Tracker> make_tracker(const TrackerSpec& spec, ModelCache& models, std::string& error) {
  if (spec.kind == config::TrackerKind::klt) return std::make_unique<KltTracker>(spec.klt);
  const std::string path = spec.edgetap.model.empty() ? bundled_model_path() : spec.edgetap.model;
  auto network = models.get(path, error);
  if (!network) return nullptr;
  const int multiple = network->config.size_multiple;
  if (spec.width % multiple != 0 || spec.height % multiple != 0) {
    error = "model_size " + std::to_string(spec.width) + "x" + std::to_string(spec.height) +
            " does not suit the edgetap network: both sides must be multiples of " + std::to_string(multiple);
    return nullptr;
  }
  try {
    const std::optional<double>& threshold = spec.edgetap.visible_threshold;
    return std::make_unique<engine::EdgeTapTracker>(
        network, make_session(*network, spec.edgetap),
        threshold ? std::optional<float>(static_cast<float>(*threshold)) : std::nullopt);
  } catch (const std::invalid_argument& e) {
    error = "edgetap model " + path + ": " + e.what();
    return nullptr;
  } catch (const std::runtime_error& e) {  // the GPU could not be set up
    error = "edgetap model " + path + " on the GPU: " + e.what();
    return nullptr;
  }
}

}  // namespace edgetap::pipeline
