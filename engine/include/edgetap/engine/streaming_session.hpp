// The EdgeTAP network streaming over a camera, on the CPU: push a frame, get
// every track's estimate for it. Exactly the semantics of the PyTorch
// reference (training/edgetap/engine.py, engine/STREAMING.md):
//   - a track starts at a point of the last pushed frame (its query frame):
//     its descriptor is sampled there and it runs one "query step" that fills
//     its anchor keys/values;
//   - every later frame: `iters` refinement iterations, starting at the
//     track's last output plus the model's entry_velocity times that output's
//     last displacement, each a local
//     correlation around the current estimate at every pyramid level, a token,
//     `blocks` causal transformer blocks attending over the track's cached
//     keys/values of the last `window` frames (plus the anchor once the query
//     frame has left the window), and a head giving dx, dy, visibility and
//     confidence logits;
//   - with the model's recent_descriptors, each track also correlates a second
//     descriptor set, re-sampled at the end of every step at its output (the
//     query's until then), after the query descriptors' correlations.
// No past frame or feature map is kept: only per-track descriptors and caches.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgetap/engine/encoder.hpp"
#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "edgetap/engine/weights.hpp"
#include "edgetap/image.hpp"
#include "edgetap/status.hpp"

namespace edgetap::engine {

struct Network {
  ModelConfig config;
  Weights weights;
};

// Loads `<stem>.json` and `<stem>.safetensors`; throws ModelError.
Network load_network(const std::string& safetensors_path, const std::string& config_path);

// Where the last push_frame's time went (milliseconds).
struct StepProfile {
  double encoder = 0, correlation = 0, token = 0, transformer = 0, head = 0;
  double total() const { return encoder + correlation + token + transformer + head; }
};

class StreamingSession final : public TrackingSession {
 public:
  // `iters`: refinement iterations per frame, 0 = the model's own (fewer is a
  // cheaper rung of the degradation ladder; the iterations share weights; more
  // than the model's throws std::invalid_argument).
  explicit StreamingSession(const Network& network, int iters = 0);

  // Encodes `frame` and advances every track to it.
  Status push_frame(const ImageView& frame) noexcept override;
  // Starts tracks at points of the last pushed frame; returns their handles.
  // Requires a pushed frame.
  std::vector<int> add_tracks(std::span<const Point2> points) override;
  void remove_track(int handle) override;
  bool alive(int handle) const override;
  const TrackEstimate& estimate(int handle) const override { return tracks_[static_cast<std::size_t>(handle)].estimate; }
  // The track's query descriptors, [levels][query_cells][D].
  const std::vector<float>& descriptors(int handle) const { return tracks_[static_cast<std::size_t>(handle)].descriptors; }
  // With the model's recent_descriptors: the descriptors the track's next frame correlates beside
  // the query's, sampled in the last stepped frame at its output, same layout; empty otherwise.
  const std::vector<float>& recent_descriptors(int handle) const { return tracks_[static_cast<std::size_t>(handle)].recent; }
  std::int64_t frames() const noexcept override { return t_ + 1; }
  const StepProfile& last_profile() const noexcept { return profile_; }
  // The last pushed frame's pyramid (for tests and golden checks).
  const Pyramid& pyramid() const noexcept { return pyramid_; }
  // Correlation vectors of the first iteration of the last step, per stepped track (tests).
  const std::vector<float>& last_first_correlation() const noexcept { return first_corr_; }

 private:
  struct Track {
    bool alive = false;
    std::int64_t query_frame = 0;
    Point2 query;
    Point2 position;  // the last output
    Point2 previous;  // the output before it (both the query point until the query step has passed)
    std::vector<float> descriptors;  // [levels][query_cells][D]
    std::vector<float> recent;       // recent_descriptors: the same, at the last output in its frame
    std::vector<float> keys, values; // [iters][blocks][heads][window + 1][head_dim]
    TrackEstimate estimate;
  };
  void step(const std::vector<int>& tracks, bool query_step);
  // Writes [levels][query_cells][D]: the query_patch^2 neighbourhood of descriptors around p in
  // the last pushed frame's pyramid.
  void sample_descriptors(Point2 p, std::vector<float>& out) const;
  // x_ += the cross-track layer over the S stepped tracks (engine/STREAMING.md): in the
  // continuing pass every track attends to all of them; a track at its query frame only to itself.
  void cross_track(const CrossTrackWeights& cw, int S, bool query_step);
  // Writes heads x (window + 1) floats: the track's additive attention bias this frame.
  void attention_bias(const Track& track, float* bias) const;
  std::size_t cache_offset(int iter, int block, int head) const;

  const Network& net_;
  const int iters_;
  const std::vector<CorrelationRead> reads_;  // the correlation reads, in corr1's input order
  CpuEncoder encoder_;
  Pyramid pyramid_;
  std::int64_t t_ = -1;
  std::vector<std::int64_t> slot_frame_;
  std::vector<Track> tracks_;
  std::vector<int> free_;
  // Per-step work buffers (rows = tracks stepped).
  std::vector<float> corr_, hidden1_, hidden2_, token_, x_, h_, normed_, qkv_, attended_, tmp_, mlp_, out_, bias_;  // bias_: [S][heads][window + 1]
  std::vector<float> scores_;  // cross-track attention, one head: [S][S]
  std::vector<float> first_corr_;
  StepProfile profile_;
  std::vector<Point2> p_;
};

}  // namespace edgetap::engine
