#include "edgetap/eval/tracker_registry.hpp"

#include <stdexcept>

#include "edgetap/pipeline/klt_tracker.hpp"

namespace edgetap::eval {

std::vector<std::string> tracker_names() { return {"klt"}; }

TrackerFactory tracker_factory(const std::string& name) {
  if (name == "klt") {
    return [] { return std::make_unique<pipeline::KltTracker>(config::KltSettings{}); };
  }
  std::string known;
  for (const std::string& n : tracker_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown tracker '" + name + "' (known: " + known + ")");
}

}  // namespace edgetap::eval
