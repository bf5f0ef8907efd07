// The network's weights, checked against the model configuration (every name
// present, every shape as the configuration implies) and laid out for the CPU
// kernels: convolutions as [Cout][k][k][Cin] with batch norm folded in.
#pragma once

#include <string>
#include <vector>

#include "edgetap/engine/model_config.hpp"

namespace edgetap::engine {

struct Conv {
  int cin = 0, cout = 0, k = 0, stride = 1;
  std::vector<float> weight;  // [cout][k][k][cin]
  std::vector<float> bias;    // [cout]
};

struct Linear {
  int in = 0, out = 0;
  std::vector<float> weight;  // [out][in], as PyTorch
  std::vector<float> bias;    // [out]
};

struct LayerNormWeights {
  std::vector<float> gamma, beta;
};

struct BlockWeights {
  LayerNormWeights ln1, ln2;
  Linear qkv, proj, fc1, fc2;
};

struct CrossTrackWeights {
  LayerNormWeights ln;
  Linear qkv, proj;
};

struct Weights {
  // Encoder, in forward order.
  Conv stem, down4, res4, down8, res8, down16, res16a, res16b, down32;
  Conv lat4, lat8, lat16, lat32;
  Conv fine2, lat2;  // the stride-2 level's side branch; empty without that level
  // Tracker.
  Linear corr1, corr2, inp, head;
  std::vector<float> h0;        // [width]
  std::vector<float> rel_bias;  // [heads][window + 1]
  std::vector<BlockWeights> blocks;
  std::vector<CrossTrackWeights> cross;  // one per ModelConfig::cross_after entry
  LayerNormWeights ln_out;

  std::size_t parameter_count() const;
};

// Loads and validates `safetensors_path` against `config`. Throws ModelError
// naming the file and the offending tensor.
Weights load_weights(const std::string& safetensors_path, const ModelConfig& config);

}  // namespace edgetap::engine
