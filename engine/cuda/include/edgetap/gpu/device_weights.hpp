// The tracker's weights on the device (everything after the encoder, which
// keeps its own): matrices in the storage precision T, biases, LayerNorm
// parameters and the attention's relative bias in float.
#pragma once

#include <vector>

#include "edgetap/engine/weights.hpp"
#include "edgetap/gpu/device_buffer.hpp"

namespace edgetap::gpu {

template <class T>
struct DeviceLinear {
  int in = 0, out = 0;
  DeviceBuffer<T> weight;     // [out][in]
  DeviceBuffer<float> bias;   // [out]
};

struct DeviceLayerNorm {
  DeviceBuffer<float> gamma, beta;
};

template <class T>
struct DeviceBlock {
  DeviceLayerNorm ln1, ln2;
  DeviceLinear<T> qkv, proj, fc1, fc2;
};

template <class T>
struct DeviceCrossTrack {
  DeviceLayerNorm ln;
  DeviceLinear<T> qkv, proj;
};

template <class T>
struct DeviceTrackerWeights {
  DeviceLinear<T> corr1, corr2, inp, head;
  DeviceBuffer<float> h0;        // [width]
  DeviceBuffer<float> rel_bias;  // [heads][window + 1]
  std::vector<DeviceBlock<T>> blocks;
  std::vector<DeviceCrossTrack<T>> cross;
  DeviceLayerNorm ln_out;
};

// Uploads on `stream` (where the buffers are later freed too).
template <class T>
DeviceTrackerWeights<T> upload_tracker_weights(const engine::Weights& w, cudaStream_t stream);

}  // namespace edgetap::gpu
