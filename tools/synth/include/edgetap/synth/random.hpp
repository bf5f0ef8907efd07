// A small deterministic random source. The generator's output must be the
// same for a seed on every machine and standard library, and the std::
// distributions are implementation-defined, so the draws are spelled out here
// (splitmix64 for the stream, Box-Muller for normals).
#pragma once

#include <cstdint>

namespace edgetap::synth {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}

  // An independent stream for sub-task `index` (for example one sequence).
  static Random derived(std::uint64_t seed, std::uint64_t index) {
    Random r(seed ^ (0x9e3779b97f4a7c15ULL * (index + 1)));
    r.next();
    return r;
  }

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  double normal();
  // -1 or +1.
  double sign() { return (next() & 1) ? 1.0 : -1.0; }

 private:
  std::uint64_t state_;
};

}  // namespace edgetap::synth
