#include "edgetap/engine/weights.hpp"

#include <cmath>

#include "edgetap/engine/safetensors.hpp"

namespace edgetap::engine {
namespace {

class Reader {
 public:
  Reader(TensorMap tensors, std::string path) : tensors_(std::move(tensors)), path_(std::move(path)) {}

  bool has(const std::string& name) const { return tensors_.count(name) > 0; }

  std::vector<float> take(const std::string& name, std::vector<std::int64_t> shape) {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) throw ModelError(path_ + ": missing tensor '" + name + "'");
    if (it->second.shape != shape) {
      Tensor expected;
      expected.shape = shape;
      throw ModelError(path_ + ": tensor '" + name + "' has shape " + it->second.shape_string() + ", the model needs " +
                       expected.shape_string());
    }
    return std::move(it->second.data);
  }

  // conv weight [cout, cin, k, k] (+ bias, + batch norm to fold) -> Conv.
  Conv conv(const std::string& prefix, int cin, int cout, int k, int stride, bool conv_bn) {
    Conv c{cin, cout, k, stride, {}, {}};
    const std::string conv_name = conv_bn ? prefix + ".conv" : prefix;
    const std::vector<float> w = take(conv_name + ".weight", {cout, cin, k, k});
    std::vector<float> bias(cout, 0.f);
    std::vector<float> scale(cout, 1.f);
    if (has(conv_name + ".bias")) bias = take(conv_name + ".bias", {cout});
    if (conv_bn && has(prefix + ".bn.weight")) {  // an unfolded export: fold here
      const auto gamma = take(prefix + ".bn.weight", {cout}), beta = take(prefix + ".bn.bias", {cout});
      const auto mean = take(prefix + ".bn.running_mean", {cout}), var = take(prefix + ".bn.running_var", {cout});
      for (int o = 0; o < cout; ++o) {
        scale[o] = gamma[o] / std::sqrt(var[o] + 1e-5f);
        bias[o] = beta[o] + (bias[o] - mean[o]) * scale[o];
      }
    }
    c.weight.resize(w.size());
    for (int o = 0; o < cout; ++o)
      for (int i = 0; i < cin; ++i)
        for (int y = 0; y < k; ++y)
          for (int x = 0; x < k; ++x)
            c.weight[((static_cast<std::size_t>(o) * k + y) * k + x) * cin + i] =
                w[((static_cast<std::size_t>(o) * cin + i) * k + y) * k + x] * scale[o];
    c.bias = std::move(bias);
    return c;
  }

  Linear linear(const std::string& prefix, int in, int out) {
    return {in, out, take(prefix + ".weight", {out, in}), take(prefix + ".bias", {out})};
  }

  LayerNormWeights layer_norm(const std::string& prefix, int width) {
    return {take(prefix + ".weight", {width}), take(prefix + ".bias", {width})};
  }

 private:
  TensorMap tensors_;
  std::string path_;
};

}  // namespace

std::size_t Weights::parameter_count() const {
  std::size_t n = h0.size() + rel_bias.size() + ln_out.gamma.size() + ln_out.beta.size();
  for (const Conv* c : {&stem, &down4, &res4, &down8, &res8, &down16, &res16a, &res16b, &down32, &lat4, &lat8,
                        &lat16, &lat32, &fine2, &lat2}) {
    n += c->weight.size() + c->bias.size();
  }
  for (const Linear* l : {&corr1, &corr2, &inp, &head}) n += l->weight.size() + l->bias.size();
  for (const BlockWeights& b : blocks) {
    n += 2 * (b.ln1.gamma.size() + b.ln2.gamma.size());
    for (const Linear* l : {&b.qkv, &b.proj, &b.fc1, &b.fc2}) n += l->weight.size() + l->bias.size();
  }
  for (const CrossTrackWeights& x : cross) {
    n += 2 * x.ln.gamma.size();
    for (const Linear* l : {&x.qkv, &x.proj}) n += l->weight.size() + l->bias.size();
  }
  return n;
}

Weights load_weights(const std::string& path, const ModelConfig& c) {
  Reader r(load_safetensors(path), path);
  const auto [c2, c4, c8, c16, c32] = c.enc_channels;
  const int D = c.feat_dim, w = c.width;
  Weights m;
  m.stem = r.conv("encoder.stem", 3, c2, 3, 2, true);
  m.down4 = r.conv("encoder.down4", c2, c4, 3, 2, true);
  m.res4 = r.conv("encoder.res4", c4, c4, 3, 1, true);
  m.down8 = r.conv("encoder.down8", c4, c8, 3, 2, true);
  m.res8 = r.conv("encoder.res8", c8, c8, 3, 1, true);
  m.down16 = r.conv("encoder.down16", c8, c16, 3, 2, true);
  m.res16a = r.conv("encoder.res16a", c16, c16, 3, 1, true);
  m.res16b = r.conv("encoder.res16b", c16, c16, 3, 1, true);
  m.down32 = r.conv("encoder.down32", c16, c32, 3, 2, true);
  m.lat4 = r.conv("encoder.lat4", c4, D, 1, 1, false);
  m.lat8 = r.conv("encoder.lat8", c8, D, 1, 1, false);
  m.lat16 = r.conv("encoder.lat16", c16, D, 1, 1, false);
  m.lat32 = r.conv("encoder.lat32", c32, D, 1, 1, false);
  if (c.fine_level()) {
    m.fine2 = r.conv("encoder.fine2", c2, c2, 3, 1, true);
    m.lat2 = r.conv("encoder.lat2", c2, D, 1, 1, false);
  }
  m.corr1 = r.linear("tracker.corr1", c.n_corr(), c.corr_hidden);
  m.corr2 = r.linear("tracker.corr2", c.corr_hidden, c.corr_hidden);
  m.inp = r.linear("tracker.inp", c.token_in(), w);
  m.head = r.linear("tracker.head", w, 4);
  m.h0 = r.take("tracker.h0", {w});
  m.rel_bias = r.take("tracker.rel_bias", {c.heads, c.window + 1});
  for (int b = 0; b < c.blocks; ++b) {
    const std::string p = "tracker.blocks." + std::to_string(b);
    m.blocks.push_back({r.layer_norm(p + ".ln1", w), r.layer_norm(p + ".ln2", w), r.linear(p + ".qkv", w, 3 * w),
                        r.linear(p + ".proj", w, w), r.linear(p + ".fc1", w, c.mlp_ratio * w),
                        r.linear(p + ".fc2", c.mlp_ratio * w, w)});
  }
  for (std::size_t i = 0; i < c.cross_after.size(); ++i) {
    const std::string p = "tracker.cross." + std::to_string(i);
    m.cross.push_back({r.layer_norm(p + ".ln", w), r.linear(p + ".qkv", w, 3 * w), r.linear(p + ".proj", w, w)});
  }
  m.ln_out = r.layer_norm("tracker.ln_out", w);
  return m;
}

}  // namespace edgetap::engine
