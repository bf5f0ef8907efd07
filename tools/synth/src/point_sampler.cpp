#include "edgetap/synth/point_sampler.hpp"

#include <optional>

#include "edgetap/eval/query_sampling.hpp"

namespace edgetap::synth {
namespace {

constexpr int kAttempts = 200;

// A point on `layer`, seen at a random frame; none if the layer is hardly ever on screen.
std::optional<LayerPoint> pick_on(const Scene& scene, int layer, Random& rng) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int t = static_cast<int>(rng.below(static_cast<std::uint64_t>(scene.frames)));
    const cv::Point2d seen(rng.uniform(0.0, scene.width - 1.0), rng.uniform(0.0, scene.height - 1.0));
    const cv::Point2d p = scene.unproject(layer, seen, t);
    if (scene.on_layer(layer, p, kOnCutoutAlpha) && scene.visible(layer, p, t)) return LayerPoint{layer, p};
  }
  return std::nullopt;
}

}  // namespace

eval::GtPoint follow(const Scene& scene, const LayerPoint& point, const std::string& id) {
  eval::GtPoint gt;
  gt.id = id;
  gt.layer = point.layer;
  for (int t = 0; t < scene.frames; ++t) {
    const cv::Point2d f = scene.project(point.layer, point.position, t);
    gt.frames.push_back({true, scene.visible(point.layer, point.position, t), true, f.x, f.y});
  }
  if (const auto first = eval::first_visible_frame(gt)) {
    gt.query_frame = *first;
    gt.query_x = gt.frames[static_cast<std::size_t>(*first)].x;
    gt.query_y = gt.frames[static_cast<std::size_t>(*first)].y;
  }
  return gt;
}

std::vector<eval::GtPoint> sample_points(const Scene& scene, int count, double background_share, Random& rng) {
  std::vector<eval::GtPoint> points;
  for (int i = 0; i < count; ++i) {
    int layer = 0;
    if (scene.layers() > 1 && rng.uniform() >= background_share) {
      layer = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(scene.layers() - 1)));
    }
    std::optional<LayerPoint> p = pick_on(scene, layer, rng);
    if (!p) p = pick_on(scene, 0, rng);  // that cut-out is barely seen: use the background
    if (!p) continue;                     // nothing visible at all (a degenerate scene)
    points.push_back(follow(scene, *p, "p" + std::to_string(points.size())));
  }
  return points;
}

}  // namespace edgetap::synth
