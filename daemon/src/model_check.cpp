#include "edgetap/daemon/model_check.hpp"

#include <algorithm>
#include <filesystem>
#include <string>

namespace edgetap::daemon {
namespace {

// One network rung of a camera: its model and size, and the keys that chose them.
struct NetworkRung {
  std::string model;  // "" = the bundled model
  int width = 0, height = 0;
  std::string model_key, size_key;  // e.g. "edgetap.model", "ladder[1].size"
};

// The rungs a camera runs the network on: its ladder's edgetap rungs, or, without a
// ladder, the camera itself when its tracker is edgetap. (The default ladder's other
// rungs are the same model at sizes rounded to multiples of 32.)
std::vector<NetworkRung> network_rungs(const config::CameraConfig& camera) {
  std::vector<NetworkRung> rungs;
  if (camera.ladder.empty()) {
    if (camera.tracker == config::TrackerKind::edgetap) {
      rungs.push_back({camera.edgetap.model, camera.model_width, camera.model_height, "edgetap.model", "model_size"});
    }
    return rungs;
  }
  for (std::size_t j = 0; j < camera.ladder.size(); ++j) {
    const config::Rung& r = camera.ladder[j];
    if (r.tracker != config::TrackerKind::edgetap) continue;
    const std::string rung = "ladder[" + std::to_string(j) + "].";
    rungs.push_back({r.model.empty() ? camera.edgetap.model : r.model, r.width ? r.width : camera.model_width,
                     r.height ? r.height : camera.model_height, r.model.empty() ? "edgetap.model" : rung + "model",
                     r.width ? rung + "size" : "model_size"});
  }
  return rungs;
}

// `side` rounded to the nearest multiple of `multiple` (at least one multiple).
int nearest_multiple(int side, int multiple) { return std::max(multiple, (side + multiple / 2) / multiple * multiple); }

class Checker {
 public:
  Checker(const config::Config& config, pipeline::ModelCache& models) : config_(config), models_(models) {}

  void check(std::size_t index, const NetworkRung& rung) {
    const std::string path = rung.model.empty() ? pipeline::bundled_model_path() : rung.model;
    if (!std::filesystem::exists(path)) {
      add(index, rung.model_key,
          rung.model.empty() ? "the bundled model " + path + " is missing (the edgetap-data package holds it); " +
                                   "install it, or name a model file in edgetap.model"
                             : "no model file " + path);
      return;
    }
    std::string error;
    const auto network = models_.get(path, error);
    if (!network) {
      add(index, rung.model_key, error);
      return;
    }
    const int m = network->config.size_multiple;
    if (rung.width % m == 0 && rung.height % m == 0) return;
    add(index, rung.size_key,
        std::to_string(rung.width) + "x" + std::to_string(rung.height) + " does not suit the edgetap model " + path +
            ": both sides must be multiples of " + std::to_string(m) + " (e.g. " +
            std::to_string(nearest_multiple(rung.width, m)) + "x" + std::to_string(nearest_multiple(rung.height, m)) +
            ")");
  }

  std::vector<config::Problem> problems() && { return std::move(problems_); }

 private:
  // A problem at where camera `index`'s `key` was written; one inherited from defaults
  // is reported once, however many cameras inherit it.
  void add(std::size_t index, const std::string& key, const std::string& message) {
    const config::CameraConfig& camera = config_.cameras[index];
    const auto found = config_.written.find("cameras[" + std::to_string(index) + "]." + key);
    const config::WrittenAt at = found != config_.written.end()
                                     ? found->second
                                     : config::WrittenAt{camera.line, 1, "camera '" + camera.name + "'." + key};
    const config::Problem problem{config_.path, at.line, at.column, at.key, message};
    const auto same = [&](const config::Problem& p) {
      return p.line == problem.line && p.column == problem.column && p.key == problem.key &&
             p.message == problem.message;
    };
    if (std::none_of(problems_.begin(), problems_.end(), same)) problems_.push_back(problem);
  }

  const config::Config& config_;
  pipeline::ModelCache& models_;
  std::vector<config::Problem> problems_;
};

}  // namespace

std::vector<config::Problem> check_models(const config::Config& config, pipeline::ModelCache& models) {
  Checker checker(config, models);
  for (std::size_t i = 0; i < config.cameras.size(); ++i) {
    for (const NetworkRung& rung : network_rungs(config.cameras[i])) checker.check(i, rung);
  }
  return std::move(checker).problems();
}

}  // namespace edgetap::daemon
