// Ground-truth points on a scene: each picked at a random frame and place where
// its layer is seen, then followed exactly through every frame (position from
// the layer's transform, visibility from the frame bounds and the mattes in
// front). The query is the first frame where it is visible, as in TAP-Vid.
#pragma once

#include <vector>

#include "edgetap/eval/sequence.hpp"
#include "edgetap/synth/random.hpp"
#include "edgetap/synth/scene.hpp"

namespace edgetap::synth {

// Points on a cut-out are picked where its matte is at least this opaque, so
// they are on the object, not on its soft edge.
inline constexpr double kOnCutoutAlpha = 0.9;

struct LayerPoint {
  int layer = 0;
  cv::Point2d position;  // layer pixels
};

// The track of a layer point through every frame of the scene.
eval::GtPoint follow(const Scene& scene, const LayerPoint& point, const std::string& id);

// `count` points, about `background_share` of them on the background and the
// rest spread over the cut-outs.
std::vector<eval::GtPoint> sample_points(const Scene& scene, int count, double background_share, Random& rng);

}  // namespace edgetap::synth
