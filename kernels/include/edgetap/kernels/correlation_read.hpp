// One window correlation of a track, shared by the engine's configuration
// (engine::ModelConfig::correlation_reads, the order corr1 reads them in) and
// the CUDA correlation kernel.
#pragma once

namespace edgetap::kernels {

// A descriptor set's (0 the query's, 1 the recent ones) descriptors of
// `descriptor_level` against the window of `window_level` around a track's estimate.
struct CorrelationRead {
  int set = 0;
  int descriptor_level = 0;
  int window_level = 0;
  bool operator==(const CorrelationRead& o) const {  // spelt out: the CUDA sources are C++17
    return set == o.set && descriptor_level == o.descriptor_level && window_level == o.window_level;
  }
};

}  // namespace edgetap::kernels
