#include "edgetap/synth/scene_builder.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace edgetap::synth {
namespace {

constexpr double kDegree = std::numbers::pi / 180.0;
constexpr int kFitAttempts = 12;
constexpr double kShrinkPerAttempt = 0.75;

// A path centred on the sequence: it passes `middle` halfway through.
SmoothPath centred(Random& rng, double middle, double rate, double wobble_rate, int frames) {
  SmoothPath p = SmoothPath::random(rng, 0.0, rate, wobble_rate, frames);
  p.start = middle - (p.at(0.5 * (frames - 1)) - p.start);
  return p;
}

SmoothPath brightness(Random& rng, double amplitude, int frames) {
  SmoothPath p = SmoothPath::random(rng, 1.0, 0.0, 0.0, frames);
  p.amplitude = amplitude * rng.uniform(0.5, 1.0);  // a slow swing of up to +-amplitude
  return p;
}

void draw_camera(BackgroundLayer& b, const SynthOptions& o, Random& rng, double strength) {
  const int n = o.frames;
  const double heading = rng.uniform(0.0, 2 * std::numbers::pi);
  const double speed = o.speed * rng.uniform(0.5, 1.5) * strength;
  b.ox = centred(rng, 0.0, speed * std::cos(heading), 0.5 * o.speed * strength, n);
  b.oy = centred(rng, 0.0, speed * std::sin(heading), 0.5 * o.speed * strength, n);
  const double roll = 0.25 * o.rotation * kDegree * strength;
  b.angle = centred(rng, 0.0, rng.uniform(-roll, roll), 0.5 * roll, n);
  const double zoom = std::log1p(o.scale_change) * strength / std::max(n - 1, 1);
  b.log_zoom = centred(rng, 0.0, rng.uniform(-zoom, zoom), 0.0, n);
  // Keystone: relative depth change at the frame edge, from one random tilt to another.
  const double k = o.perspective * strength / (0.5 * std::max(o.width, o.height));
  for (SmoothPath* p : {&b.kx, &b.ky}) {
    const double from = rng.uniform(-k, k), to = rng.uniform(-k, k);
    *p = SmoothPath{from, (to - from) / std::max(n - 1, 1), 0, 0, 0};
  }
}

CutoutLayer draw_cutout(cv::Mat image, const SynthOptions& o, Random& rng) {
  const int n = o.frames;
  CutoutLayer c;
  const double size = rng.uniform(0.3, 0.55) * std::max(o.width, o.height);
  const double base_scale = size / std::max(image.cols, image.rows);
  c.image = std::move(image);
  // On screen halfway through, crossing in a random direction.
  const double heading = rng.uniform(0.0, 2 * std::numbers::pi);
  const double speed = o.speed * rng.uniform(0.5, 1.5);
  c.cx = centred(rng, rng.uniform(0.15, 0.85) * o.width, speed * std::cos(heading), 0.5 * o.speed, n);
  c.cy = centred(rng, rng.uniform(0.15, 0.85) * o.height, speed * std::sin(heading), 0.5 * o.speed, n);
  const double turn = o.rotation * kDegree;
  c.angle = centred(rng, rng.uniform(-0.5, 0.5), rng.uniform(-turn, turn), 0.5 * turn, n);
  const double grow = std::log1p(o.scale_change) / std::max(n - 1, 1);
  c.log_scale = centred(rng, std::log(base_scale), rng.uniform(-grow, grow), 0.0, n);
  c.gain = brightness(rng, o.drift, n);
  return c;
}

}  // namespace

bool camera_stays_on_photo(const Scene& scene) {
  const int samples = std::max(1, scene.blur_samples);
  const cv::Point2d corners[4] = {{0, 0}, {scene.width - 1.0, 0}, {0, scene.height - 1.0},
                                  {scene.width - 1.0, scene.height - 1.0}};
  for (int t = 0; t < scene.frames; ++t) {
    for (int s = 0; s < samples; ++s) {
      const double tau = samples == 1 ? t : t + scene.shutter * (static_cast<double>(s) / (samples - 1) - 0.5);
      for (const cv::Point2d& c : corners) {
        if (!scene.on_layer(0, scene.unproject(0, c, tau), 0.0)) return false;
      }
    }
  }
  return true;
}

Scene build_scene(const SynthOptions& options, Random& rng, cv::Mat background, std::vector<cv::Mat> cutouts) {
  Scene scene;
  scene.width = options.width;
  scene.height = options.height;
  scene.frames = options.frames;
  scene.noise = options.noise;
  scene.blur_samples = options.blur_samples;
  scene.shutter = options.shutter;
  scene.noise_seed = rng.next();
  scene.background.image = std::move(background);
  scene.background.gain = brightness(rng, options.drift, options.frames);
  for (SmoothPath& c : scene.colour) c = brightness(rng, 0.5 * options.drift, options.frames);
  // The camera must not leave the photograph; tame its motion until it does not
  // (a mirrored border is still exact, just less natural).
  double strength = 1.0;
  Random camera_rng = Random::derived(rng.next(), 0);
  for (int attempt = 0; attempt < kFitAttempts; ++attempt) {
    Random attempt_rng = camera_rng;
    draw_camera(scene.background, options, attempt_rng, strength);
    if (camera_stays_on_photo(scene)) break;
    strength *= kShrinkPerAttempt;
  }
  for (cv::Mat& c : cutouts) scene.cutouts.push_back(draw_cutout(std::move(c), options, rng));
  return scene;
}

}  // namespace edgetap::synth
