#include "edgetap/engine/streaming_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "edgetap/engine/safetensors.hpp"
#include "edgetap/kernels/cpu.hpp"

namespace edgetap::engine {

namespace k = edgetap::kernels::cpu;

namespace {

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// Adds the milliseconds since `start` to `into` and restarts the clock.
void lap(std::chrono::steady_clock::time_point& start, double& into) {
  const auto now = std::chrono::steady_clock::now();
  into += std::chrono::duration<double, std::milli>(now - start).count();
  start = now;
}

void linear(const Linear& l, const float* in, int rows, float* out, bool accumulate = false) {
  k::gemm_nt(rows, l.out, l.in, in, l.weight.data(), l.bias.data(), out, accumulate);
}

}  // namespace

Network load_network(const std::string& safetensors_path, const std::string& config_path) {
  Network n;
  n.config = load_model_config(config_path);
  n.weights = load_weights(safetensors_path, n.config);
  return n;
}

StreamingSession::StreamingSession(const Network& network, int iters)
    : net_(network),
      iters_(network.config.iterations(iters)),
      reads_(network.config.correlation_reads()),
      encoder_(network.config, network.weights),
      slot_frame_(network.config.window, -1) {}

std::size_t StreamingSession::cache_offset(int iter, int block, int head) const {
  const ModelConfig& c = net_.config;
  return ((static_cast<std::size_t>(iter) * c.blocks + block) * c.heads + head) * (c.window + 1) * c.head_dim();
}

Status StreamingSession::push_frame(const ImageView& frame) noexcept {
  const ModelConfig& c = net_.config;
  if (frame.empty() || frame.width % c.size_multiple != 0 || frame.height % c.size_multiple != 0) {
    return Status::error(Status::Code::bad_frame, "the network needs frame sides that are multiples of " +
                                                      std::to_string(c.size_multiple) + ", got " +
                                                      std::to_string(frame.width) + "x" + std::to_string(frame.height));
  }
  try {
    profile_ = StepProfile{};
    auto clock = std::chrono::steady_clock::now();
    encoder_.encode(frame, pyramid_);
    lap(clock, profile_.encoder);
    ++t_;
    slot_frame_[static_cast<std::size_t>(t_ % c.window)] = t_;
    std::vector<int> active;
    for (std::size_t i = 0; i < tracks_.size(); ++i) {
      if (tracks_[i].alive) active.push_back(static_cast<int>(i));
    }
    step(active, false);
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("edgetap network: ") + e.what());
  }
}

std::vector<int> StreamingSession::add_tracks(std::span<const Point2> points) {
  const ModelConfig& c = net_.config;
  if (t_ < 0) throw std::logic_error("add_tracks needs a pushed frame");
  std::vector<int> handles;
  for (const Point2& p : points) {
    int handle;
    if (!free_.empty()) {
      handle = free_.back();
      free_.pop_back();
    } else {
      handle = static_cast<int>(tracks_.size());
      tracks_.emplace_back();
    }
    Track& track = tracks_[static_cast<std::size_t>(handle)];
    track.alive = true;
    track.query_frame = t_;
    track.query = track.position = track.previous = p;
    sample_descriptors(p, track.descriptors);
    if (c.recent_descriptors) {
      track.recent = track.descriptors;  // the query's, until the query step re-samples them at the same point
    } else {
      track.recent.clear();
    }
    const std::size_t cache = cache_offset(c.iters, 0, 0);
    track.keys.assign(cache, 0.f);
    track.values.assign(cache, 0.f);
    handles.push_back(handle);
  }
  step(handles, true);
  return handles;
}

void StreamingSession::sample_descriptors(Point2 p, std::vector<float>& out) const {
  // A query_patch^2 neighbourhood of descriptors per level, offsets in level cells,
  // row-major (dy outer); one descriptor at the point itself when query_patch is 1.
  const ModelConfig& c = net_.config;
  const int qc = c.query_cells(), half = c.query_patch / 2;
  out.assign(static_cast<std::size_t>(c.levels()) * qc * c.feat_dim, 0.f);
  for (int l = 0; l < c.levels(); ++l) {
    const FeatureMap& f = pyramid_.levels[l];
    const float s = static_cast<float>(c.strides[l]);
    for (int j = 0; j < qc; ++j) {
      const float dx = static_cast<float>(j % c.query_patch - half), dy = static_cast<float>(j / c.query_patch - half);
      k::bilinear_sample_hwc(f.data.data(), f.height, f.width, f.channels, p.x / s + dx, p.y / s + dy,
                             out.data() + (static_cast<std::size_t>(l) * qc + j) * c.feat_dim);
    }
  }
}

void StreamingSession::remove_track(int handle) {
  Track& track = tracks_.at(static_cast<std::size_t>(handle));
  if (!track.alive) return;
  track = Track{};
  free_.push_back(handle);
}

bool StreamingSession::alive(int handle) const {
  return handle >= 0 && static_cast<std::size_t>(handle) < tracks_.size() && tracks_[static_cast<std::size_t>(handle)].alive;
}

void StreamingSession::attention_bias(const Track& track, float* bias) const {
  // bias[head][slot], slot W = the anchor; -inf where not attended.
  const ModelConfig& c = net_.config;
  const int W = c.window;
  const float none = -std::numeric_limits<float>::infinity();
  std::fill_n(bias, static_cast<std::size_t>(c.heads) * (W + 1), none);
  for (int h = 0; h < c.heads; ++h) {
    const float* rel = net_.weights.rel_bias.data() + static_cast<std::size_t>(h) * (W + 1);
    for (int j = 0; j < W; ++j) {
      const std::int64_t sf = slot_frame_[static_cast<std::size_t>(j)];
      if (sf < 0 || sf < track.query_frame) continue;
      bias[static_cast<std::size_t>(h) * (W + 1) + j] = rel[std::clamp<std::int64_t>(t_ - sf, 0, W)];
    }
    if (t_ - track.query_frame >= W) bias[static_cast<std::size_t>(h) * (W + 1) + W] = rel[W];
  }
}

void StreamingSession::step(const std::vector<int>& ids, bool query_step) {
  const ModelConfig& c = net_.config;
  const Weights& w = net_.weights;
  const int S = static_cast<int>(ids.size());
  if (S == 0) return;
  const int width = c.width, dh = c.head_dim(), W = c.window, wc = c.window_cells();
  const int qc = c.query_cells();
  const std::size_t rows = static_cast<std::size_t>(S);
  corr_.resize(rows * c.n_corr());
  hidden1_.resize(rows * c.corr_hidden);
  hidden2_.resize(rows * c.corr_hidden);
  token_.resize(rows * c.token_in());
  x_.resize(rows * width);
  h_.resize(rows * width);
  normed_.resize(rows * width);
  qkv_.resize(rows * 3 * width);
  attended_.resize(rows * width);
  tmp_.resize(rows * width);
  mlp_.resize(rows * c.mlp_ratio * width);
  out_.resize(rows * 4);
  p_.resize(rows);
  const std::size_t bias_row = static_cast<std::size_t>(c.heads) * (W + 1);  // a track's attention bias
  bias_.resize(rows * bias_row);
  const float v = c.entry_velocity;
  for (int i = 0; i < S; ++i) {
    const Track& tr = tracks_[static_cast<std::size_t>(ids[i])];
    // The entry: the last output, extrapolated by entry_velocity of its last displacement.
    p_[i] = query_step ? tr.query
                       : Point2{tr.position.x + v * (tr.position.x - tr.previous.x),
                                tr.position.y + v * (tr.position.y - tr.previous.y)};
    std::copy(w.h0.begin(), w.h0.end(), h_.begin() + static_cast<std::ptrdiff_t>(i) * width);
    attention_bias(tr, bias_.data() + static_cast<std::size_t>(i) * bias_row);  // the same for every iteration and block
  }
  const int slot = static_cast<int>(t_ % W);
  const float scale = 1.f / std::sqrt(static_cast<float>(dh));

  auto clock = std::chrono::steady_clock::now();
  for (int it = 0; it < iters_; ++it) {
    // Local correlation at every level, then the correlation MLP.
    for (int i = 0; i < S; ++i) {
      const Track& tr = tracks_[static_cast<std::size_t>(ids[i])];
      // Layout [read][descriptor][window cell], the reads in ModelConfig::correlation_reads' order
      // (the reference's): a set's descriptors of one level against one level's window.
      float* out = corr_.data() + static_cast<std::size_t>(i) * c.n_corr();
      for (const CorrelationRead& read : reads_) {
        const std::vector<float>& descs = read.set == 0 ? tr.descriptors : tr.recent;
        const FeatureMap& f = pyramid_.levels[read.window_level];
        const float s = static_cast<float>(c.strides[read.window_level]);
        k::window_correlation_hwc(f.data.data(), f.height, f.width, f.channels, p_[i].x / s, p_[i].y / s, c.radius,
                                  descs.data() + static_cast<std::size_t>(read.descriptor_level) * qc * c.feat_dim, qc,
                                  out);
        out += static_cast<std::size_t>(qc) * wc;
      }
    }
    if (it == 0) first_corr_ = corr_;
    lap(clock, profile_.correlation);
    linear(w.corr1, corr_.data(), S, hidden1_.data());
    k::gelu_inplace(hidden1_.data(), hidden1_.size());
    linear(w.corr2, hidden1_.data(), S, hidden2_.data());
    // Token input: [correlation features, Fourier(displacement / scale), anchor flag].
    const int ti = c.token_in();
    for (int i = 0; i < S; ++i) {
      const Track& tr = tracks_[static_cast<std::size_t>(ids[i])];
      float* tok = token_.data() + static_cast<std::size_t>(i) * ti;
      std::copy_n(hidden2_.data() + static_cast<std::size_t>(i) * c.corr_hidden, c.corr_hidden, tok);
      float* enc = tok + c.corr_hidden;
      const float dx = (p_[i].x - tr.query.x) / c.disp_scale, dy = (p_[i].y - tr.query.y) / c.disp_scale;
      enc[0] = dx;
      enc[1] = dy;
      for (int f = 0; f < c.n_freq; ++f) {
        const float a = std::numbers::pi_v<float> * std::ldexp(1.f, f);
        enc[2 + 4 * f + 0] = std::sin(dx * a);
        enc[2 + 4 * f + 1] = std::sin(dy * a);
        enc[2 + 4 * f + 2] = std::cos(dx * a);
        enc[2 + 4 * f + 3] = std::cos(dy * a);
      }
      enc[2 + 4 * c.n_freq] = query_step ? 1.f : 0.f;
    }
    linear(w.inp, token_.data(), S, x_.data());
    for (std::size_t j = 0; j < x_.size(); ++j) x_[j] += h_[j];
    lap(clock, profile_.token);

    for (int b = 0; b < c.blocks; ++b) {
      const BlockWeights& bw = w.blocks[static_cast<std::size_t>(b)];
      k::layer_norm_rows(x_.data(), S, width, bw.ln1.gamma.data(), bw.ln1.beta.data(), normed_.data());
      linear(bw.qkv, normed_.data(), S, qkv_.data());
      for (int i = 0; i < S; ++i) {
        Track& tr = tracks_[static_cast<std::size_t>(ids[i])];
        const float* bias = bias_.data() + static_cast<std::size_t>(i) * bias_row;
        const float* q = qkv_.data() + static_cast<std::size_t>(i) * 3 * width;
        for (int h = 0; h < c.heads; ++h) {
          float* keys = tr.keys.data() + cache_offset(it, b, h);
          float* values = tr.values.data() + cache_offset(it, b, h);
          std::copy_n(q + width + h * dh, dh, keys + static_cast<std::size_t>(slot) * dh);
          std::copy_n(q + 2 * width + h * dh, dh, values + static_cast<std::size_t>(slot) * dh);
          if (query_step) {
            std::copy_n(q + width + h * dh, dh, keys + static_cast<std::size_t>(W) * dh);
            std::copy_n(q + 2 * width + h * dh, dh, values + static_cast<std::size_t>(W) * dh);
          }
          k::attend_cached(q + h * dh, keys, values, bias + static_cast<std::size_t>(h) * (W + 1), W + 1, dh,
                           scale, attended_.data() + static_cast<std::size_t>(i) * width + h * dh);
        }
      }
      linear(bw.proj, attended_.data(), S, x_.data(), true);  // x += proj(o)
      k::layer_norm_rows(x_.data(), S, width, bw.ln2.gamma.data(), bw.ln2.beta.data(), normed_.data());
      linear(bw.fc1, normed_.data(), S, mlp_.data());
      k::gelu_inplace(mlp_.data(), mlp_.size());
      linear(bw.fc2, mlp_.data(), S, x_.data(), true);         // x += mlp(x)
      if (const int xi = c.cross_layer(b); xi >= 0) cross_track(w.cross[static_cast<std::size_t>(xi)], S, query_step);
    }
    h_ = x_;
    lap(clock, profile_.transformer);
    k::layer_norm_rows(x_.data(), S, width, w.ln_out.gamma.data(), w.ln_out.beta.data(), normed_.data());
    linear(w.head, normed_.data(), S, out_.data());
    for (int i = 0; i < S; ++i) {
      if (query_step) continue;  // the query point is given, not estimated
      p_[i].x += out_[static_cast<std::size_t>(i) * 4 + 0];
      p_[i].y += out_[static_cast<std::size_t>(i) * 4 + 1];
    }
    lap(clock, profile_.head);
  }
  for (int i = 0; i < S; ++i) {
    Track& tr = tracks_[static_cast<std::size_t>(ids[i])];
    tr.previous = tr.position;
    tr.position = p_[i];
    // The next frame's recent descriptors: this frame's, at this output.
    if (c.recent_descriptors) sample_descriptors(p_[i], tr.recent);
    tr.estimate.x = p_[i].x;
    tr.estimate.y = p_[i].y;
    tr.estimate.visible = query_step ? 1.f : sigmoid(out_[static_cast<std::size_t>(i) * 4 + 2]);
    tr.estimate.confidence = query_step ? 1.f : sigmoid(out_[static_cast<std::size_t>(i) * 4 + 3]);
  }
}

void StreamingSession::cross_track(const CrossTrackWeights& cw, int S, bool query_step) {
  const ModelConfig& c = net_.config;
  const int width = c.width, dh = c.head_dim();
  const std::size_t rows = static_cast<std::size_t>(S);
  k::layer_norm_rows(x_.data(), S, width, cw.ln.gamma.data(), cw.ln.beta.data(), normed_.data());
  linear(cw.qkv, normed_.data(), S, qkv_.data());
  const auto at = [&](std::size_t i, int part, int h) { return qkv_.data() + i * 3 * width + part * width + h * dh; };
  if (query_step) {  // a track at its query frame attends to itself only: the weight is 1
    for (std::size_t i = 0; i < rows; ++i)
      for (int h = 0; h < c.heads; ++h) std::copy_n(at(i, 2, h), dh, attended_.data() + i * width + h * dh);
  } else {
    // Per head: scores = Q K^T / sqrt(dh), row softmax, O = P V, as matrix products
    // reading the head's columns of qkv_ in place.
    scores_.resize(rows * rows);
    const float scale = 1.f / std::sqrt(static_cast<float>(dh));
    const int ld = 3 * width;
    for (int h = 0; h < c.heads; ++h) {
      k::gemm_strided(S, S, dh, at(0, 0, h), ld, at(0, 1, h), ld, true, scores_.data(), S);
      k::softmax_rows(scores_.data(), S, S, scale);
      k::gemm_strided(S, dh, S, scores_.data(), S, at(0, 2, h), ld, false, attended_.data() + h * dh, width);
    }
  }
  linear(cw.proj, attended_.data(), S, x_.data(), true);  // x += proj(o)
}

}  // namespace edgetap::engine
