// The checks start-up makes on the edgetap models of a configuration, made
// without starting anything (edgetap check-config): every model a camera's
// tracker or ladder runs exists and loads (its .safetensors and the .json
// beside it), and the size each runs at is a multiple of the network's
// size_multiple. Each problem names the file, line and key that chose the
// model or the size.
#pragma once

#include <vector>

#include "edgetap/config/load.hpp"
#include "edgetap/ladder/tracker_factory.hpp"

namespace edgetap::daemon {

std::vector<config::Problem> check_models(const config::Config& config, pipeline::ModelCache& models);

}  // namespace edgetap::daemon
