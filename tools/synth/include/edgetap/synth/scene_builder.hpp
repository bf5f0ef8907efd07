// Draws a scene's random motion and appearance from the difficulty knobs:
// the camera drifts, rolls, zooms and tilts a little over the background; each
// cut-out crosses the frame (it is on screen mid-sequence), turning and
// changing size; brightness and colour balance drift slowly.
#pragma once

#include <opencv2/core.hpp>

#include <vector>

#include "edgetap/synth/random.hpp"
#include "edgetap/synth/scene.hpp"
#include "edgetap/synth/synth_options.hpp"

namespace edgetap::synth {

// `background`: CV_32FC3 (see load_background); `cutouts`: CV_32FC4, back to front.
Scene build_scene(const SynthOptions& options, Random& rng, cv::Mat background, std::vector<cv::Mat> cutouts);

// Whether the frame stays inside the photograph at every (sub-)frame time, so
// no mirrored border shows.
bool camera_stays_on_photo(const Scene& scene);

}  // namespace edgetap::synth
