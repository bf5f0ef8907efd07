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

std::unique_ptr<Tracker> make_tracker(const config::CameraConfig& camera, ModelCache& models, std::string& error) {
  if (camera.tracker == config::TrackerKind::klt) return std::make_unique<KltTracker>(camera.klt);
  const std::string path = camera.edgetap.model.empty() ? bundled_model_path() : camera.edgetap.model;
  auto network = models.get(path, error);
  if (!network) return nullptr;
  const int multiple = network->config.size_multiple;
  if (camera.model_width % multiple != 0 || camera.model_height % multiple != 0) {
    error = "model_size " + std::to_string(camera.model_width) + "x" + std::to_string(camera.model_height) +
            " does not suit the edgetap network: both sides must be multiples of " + std::to_string(multiple);
    return nullptr;
  }
  try {
    const std::optional<double>& threshold = camera.edgetap.visible_threshold;
    return std::make_unique<engine::EdgeTapTracker>(
        network, make_session(*network, camera.edgetap),
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
