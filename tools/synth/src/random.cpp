#include "edgetap/synth/random.hpp"

#include <cmath>
#include <numbers>

namespace edgetap::synth {

double Random::normal() {
  const double u1 = 1.0 - uniform();  // in (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace edgetap::synth
