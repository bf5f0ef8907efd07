// Smooth motion over a sequence: each parameter (an offset, an angle, a log
// scale) is a steady drift plus one slow sinusoidal wobble, so speeds change
// gently and every frame's value is known exactly, also between frames (motion
// blur samples fractional times).
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "edgetap/synth/random.hpp"

namespace edgetap::synth {

struct SmoothPath {
  double start = 0;      // value at t = 0
  double rate = 0;       // drift per frame
  double amplitude = 0;  // wobble amplitude
  double omega = 0;      // wobble angular frequency, radians per frame
  double phase = 0;

  double at(double t) const {
    return start + rate * t + amplitude * (std::sin(omega * t + phase) - std::sin(phase));
  }

  // A path drifting at `rate` per frame, wobbling with a peak speed of up to
  // `wobble_rate` per frame at 0.5 to 1.5 cycles over `frames`.
  static SmoothPath random(Random& rng, double start, double rate, double wobble_rate, int frames) {
    SmoothPath p;
    p.start = start;
    p.rate = rate;
    p.omega = 2.0 * std::numbers::pi * rng.uniform(0.5, 1.5) / std::max(frames, 2);
    p.amplitude = wobble_rate * rng.uniform(0.3, 1.0) / p.omega;
    p.phase = rng.uniform(0.0, 2.0 * std::numbers::pi);
    return p;
  }
};

}  // namespace edgetap::synth
