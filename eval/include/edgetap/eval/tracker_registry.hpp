// The trackers `edgetap eval` can run, by name.
#pragma once

#include <string>
#include <vector>

#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

std::vector<std::string> tracker_names();

// A factory for the named tracker with its default settings; throws
// std::invalid_argument naming the known trackers when `name` is not one.
TrackerFactory tracker_factory(const std::string& name);

}  // namespace edgetap::eval
