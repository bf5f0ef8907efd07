#include "edgetap/eval/tracker_registry.hpp"

#include <memory>
#include <optional>
#include <stdexcept>

#include "edgetap/ladder/tracker_factory.hpp"

namespace edgetap::eval {

TrackerFactory tracker_factory(const std::string& name, FrameSize size, const config::EdgeTapSettings& edgetap) {
  const std::optional<config::TrackerKind> kind = config::tracker_kind(name);
  if (!kind) throw std::invalid_argument("unknown tracker '" + name + "'");
  config::CameraConfig camera;
  camera.name = "eval";
  camera.tracker = *kind;
  camera.edgetap = edgetap;
  if (!size.native()) {
    camera.model_width = size.width;
    camera.model_height = size.height;
  }
  // One cache for every tracker this factory makes: a model loads once per run.
  auto models = std::make_shared<pipeline::ModelCache>();
  std::string error;
  if (!pipeline::make_tracker(camera, *models, error)) throw std::invalid_argument(error);
  return [camera, models] {
    std::string late_error;
    auto tracker = pipeline::make_tracker(camera, *models, late_error);
    if (!tracker) throw TrackerError(late_error);
    return tracker;
  };
}

}  // namespace edgetap::eval
