#include "edgetap/gpu/device_weights.hpp"

namespace edgetap::gpu {

namespace {

template <class T>
DeviceLinear<T> upload(const engine::Linear& l, cudaStream_t stream) {
  DeviceLinear<T> d;
  d.in = l.in;
  d.out = l.out;
  d.weight = to_device<T>(l.weight, stream);
  d.bias = to_device<float>(l.bias, stream);
  return d;
}

DeviceLayerNorm upload(const engine::LayerNormWeights& ln, cudaStream_t stream) {
  DeviceLayerNorm d;
  d.gamma = to_device<float>(ln.gamma, stream);
  d.beta = to_device<float>(ln.beta, stream);
  return d;
}

}  // namespace

template <class T>
DeviceTrackerWeights<T> upload_tracker_weights(const engine::Weights& w, cudaStream_t stream) {
  DeviceTrackerWeights<T> d;
  d.corr1 = upload<T>(w.corr1, stream);
  d.corr2 = upload<T>(w.corr2, stream);
  d.inp = upload<T>(w.inp, stream);
  d.head = upload<T>(w.head, stream);
  d.h0 = to_device<float>(w.h0, stream);
  d.rel_bias = to_device<float>(w.rel_bias, stream);
  for (const engine::BlockWeights& b : w.blocks) {
    DeviceBlock<T>& db = d.blocks.emplace_back();
    db.ln1 = upload(b.ln1, stream);
    db.ln2 = upload(b.ln2, stream);
    db.qkv = upload<T>(b.qkv, stream);
    db.proj = upload<T>(b.proj, stream);
    db.fc1 = upload<T>(b.fc1, stream);
    db.fc2 = upload<T>(b.fc2, stream);
  }
  for (const engine::CrossTrackWeights& c : w.cross) {
    DeviceCrossTrack<T>& dc = d.cross.emplace_back();
    dc.ln = upload(c.ln, stream);
    dc.qkv = upload<T>(c.qkv, stream);
    dc.proj = upload<T>(c.proj, stream);
  }
  d.ln_out = upload(w.ln_out, stream);
  return d;
}

template DeviceTrackerWeights<float> upload_tracker_weights<float>(const engine::Weights&, cudaStream_t);
template DeviceTrackerWeights<__half> upload_tracker_weights<__half>(const engine::Weights&, cudaStream_t);

}  // namespace edgetap::gpu
