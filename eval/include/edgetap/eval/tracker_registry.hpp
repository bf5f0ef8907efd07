// The trackers `edgetap eval` can run, by name: whatever the daemon's tracker
// factory (pipeline/tracker_factory.hpp) makes from a camera configuration,
// with that configuration's defaults ("klt"; "edgetap" with the bundled model).
#pragma once

#include <string>

#include "edgetap/eval/frame_source.hpp"
#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

// A factory for the named tracker, fed frames of `size` (the camera's model
// size; native sizes keep the configuration's default). Makes one tracker up
// front, so an unknown name or a bad model file is reported here: throws
// std::invalid_argument with the factory's message.
// `iters` > 0 sets the edgetap network's refinement iterations (a ladder rung's setting);
// a non-empty `model` names the edgetap weights (.safetensors, its .json beside),
// as a camera's edgetap.model does, instead of the bundled model.
// `template_refinement`: edgetap publishes template-refined positions where the model declares it.
TrackerFactory tracker_factory(const std::string& name, FrameSize size, int iters = 0, const std::string& model = "",
                               bool template_refinement = true);

}  // namespace edgetap::eval
