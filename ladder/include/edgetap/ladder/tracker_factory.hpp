// Makes a camera's tracker from its configuration: `klt`, or `edgetap` (the
// network) with its model file. A model is loaded once per file and shared by
// every camera that uses it. A missing, truncated or mismatched model is an
// error for that camera only.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

// The model shipped with EdgeTAP: $EDGETAP_DATA_DIR/models, then
// /usr/share/edgetap/models, then the source tree's models/.
std::string bundled_model_path();
// The bundled edgetap-large: where a GPU runs the network, the default ladder's first rungs.
std::string bundled_large_model_path();

class ModelCache {
 public:
  // The network of `weights_path` (its configuration beside it, .json), or
  // null with `error` naming the file and the problem.
  std::shared_ptr<const engine::Network> get(const std::string& weights_path, std::string& error);

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<const engine::Network>> loaded_;
};

// What one tracker is made of: the kind, its settings and the frames' size.
struct TrackerSpec {
  config::TrackerKind kind = config::TrackerKind::edgetap;
  config::KltSettings klt;
  config::EdgeTapSettings edgetap;
  int width = 0, height = 0;  // the frames the tracker sees (model pixels)
};
// The camera's own tracker.
TrackerSpec tracker_spec(const config::CameraConfig& camera);
// The camera's tracker at a ladder rung (sizes already resolved: resolve_ladder).
TrackerSpec tracker_spec(const config::CameraConfig& camera, const config::Rung& rung);

// Null with `error` when the tracker cannot be made. An edgetap tracker runs
// on the GPU when backend::network_on_gpu(), else on the CPU.
std::unique_ptr<Tracker> make_tracker(const TrackerSpec& spec, ModelCache& models, std::string& error);
// The camera's own tracker: make_tracker(tracker_spec(camera), ...).
std::unique_ptr<Tracker> make_tracker(const config::CameraConfig& camera, ModelCache& models, std::string& error);

}  // namespace edgetap::pipeline
