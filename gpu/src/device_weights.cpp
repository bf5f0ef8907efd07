#include "edgetap/gpu/device_weights.hpp"

namespace edgetap::gpu {

namespace {

template <class T>
DeviceLinear<T> upload(const engine::Linear& l) {
  DeviceLinear<T> d;
  d.in = l.in;
  d.out = l.out;
  d.weight = to_device<T>(l.weight);
  d.bias = to_device<float>(l.bias);
  return d;
}

DeviceLayerNorm upload(const engine::LayerNormWeights& ln) {
  DeviceLayerNorm d;
  d.gamma = to_device<float>(ln.gamma);
  d.beta = to_device<float>(ln.beta);
  return d;
}

}  // namespace

template <class T>
DeviceTrackerWeights<T> upload_tracker_weights(const engine::Weights& w) {
  DeviceTrackerWeights<T> d;
  d.corr1 = upload<T>(w.corr1);
  d.corr2 = upload<T>(w.corr2);
  d.inp = upload<T>(w.inp);
  d.head = upload<T>(w.head);
  d.h0 = to_device<float>(w.h0);
  d.rel_bias = to_device<float>(w.rel_bias);
  for (const engine::BlockWeights& b : w.blocks) {
    DeviceBlock<T>& db = d.blocks.emplace_back();
    db.ln1 = upload(b.ln1);
    db.ln2 = upload(b.ln2);
    db.qkv = upload<T>(b.qkv);
    db.proj = upload<T>(b.proj);
    db.fc1 = upload<T>(b.fc1);
    db.fc2 = upload<T>(b.fc2);
  }
  for (const engine::CrossTrackWeights& c : w.cross) {
    DeviceCrossTrack<T>& dc = d.cross.emplace_back();
    dc.ln = upload(c.ln);
    dc.qkv = upload<T>(c.qkv);
    dc.proj = upload<T>(c.proj);
  }
  d.ln_out = upload(w.ln_out);
  return d;
}

template DeviceTrackerWeights<float> upload_tracker_weights<float>(const engine::Weights&);
template DeviceTrackerWeights<__half> upload_tracker_weights<__half>(const engine::Weights&);

}  // namespace edgetap::gpu
