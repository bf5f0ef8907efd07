#include "edgetap/ladder/gpu_warm_up.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "edgetap/backend/engine_choice.hpp"
#include "edgetap/ladder/laddered_tracker.hpp"

namespace edgetap::pipeline {

GpuWarmUp warm_up_gpu(const std::vector<config::CameraConfig>& cameras, ModelCache& models) {
  if (!backend::network_on_gpu()) return {};
  for (const config::CameraConfig& camera : cameras) {
    std::vector<std::string> skipped;
    const std::vector<config::Rung> rungs = resolve_ladder(camera, skipped);
    if (rungs.empty() || rungs.front().tracker != config::TrackerKind::edgetap) continue;
    const auto t0 = std::chrono::steady_clock::now();
    std::string error;
    const config::Rung& rung = rungs.front();
    std::unique_ptr<Tracker> tracker = rung_tracker_factory(camera, models)(rung, error);
    if (!tracker) return {};
    const int width = rung.width > 0 ? rung.width : camera.model_width;
    const int height = rung.height > 0 ? rung.height : camera.model_height;
    const Query centre{"warm-up", static_cast<float>(width) / 2, static_cast<float>(height) / 2};
    tracker->add_queries({&centre, 1});
    const std::vector<std::uint8_t> blank(static_cast<std::size_t>(width) * height * 3, 128);
    std::vector<TrackPoint> out;
    if (!tracker->push_frame({blank.data(), width, height, static_cast<std::size_t>(width) * 3}, out)) return {};
    return {std::move(tracker), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
  }
  return {};
}

}  // namespace edgetap::pipeline
