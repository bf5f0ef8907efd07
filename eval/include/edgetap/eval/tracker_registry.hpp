// The trackers `edgetap eval` can run, by name: whatever the daemon's tracker
// factory (pipeline/tracker_factory.hpp) makes from a camera configuration,
// with that configuration's defaults ("klt"; "edgetap" with the bundled model).
#pragma once

#include <string>

#include "edgetap/config/config.hpp"
#include "edgetap/eval/frame_source.hpp"
#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

// A factory for the named tracker, fed frames of `size` (the camera's model
// size; native sizes keep the configuration's default). Makes one tracker up
// front, so an unknown name or a bad model file is reported here: throws
// std::invalid_argument with the factory's message.
// `edgetap`: the network tracker's settings, as a camera's (config::EdgeTapSettings:
// model, visible_threshold, template_refinement, support_grid, and iters, a ladder
// rung's refinement iterations); the defaults run the bundled model as published.
TrackerFactory tracker_factory(const std::string& name, FrameSize size, const config::EdgeTapSettings& edgetap = {});

}  // namespace edgetap::eval
