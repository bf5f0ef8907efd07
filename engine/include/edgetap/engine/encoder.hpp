// The CNN encoder on the CPU: an RGB frame to a feature pyramid at strides
// 4, 8, 16 and 32 (and 2 where the model has that level), D channels each,
// HWC. Buffers are kept between frames so the steady state does not allocate.
#pragma once

#include <array>
#include <vector>

#include "edgetap/engine/weights.hpp"
#include "edgetap/image.hpp"

namespace edgetap::engine {

struct FeatureMap {
  int height = 0, width = 0, channels = 0;
  std::vector<float> data;  // HWC
};

struct Pyramid {
  std::vector<FeatureMap> levels;  // fine to coarse, as ModelConfig::strides
};

class CpuEncoder {
 public:
  CpuEncoder(const ModelConfig& config, const Weights& weights) : config_(config), weights_(weights) {}

  // `frame` sides must be multiples of config.size_multiple.
  void encode(const ImageView& frame, Pyramid& out);

 private:
  void conv(const Conv& c, const std::vector<float>& in, int H, int W, std::vector<float>& out);

  const ModelConfig& config_;
  const Weights& weights_;
  std::vector<float> input_, x2_, c2_, c4_, c8_, c16_, c32_, tmp_, scratch_;
};

}  // namespace edgetap::engine
