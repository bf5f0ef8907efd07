// The EdgeTAP network's hyper-parameters, read from the JSON file exported
// beside the weights (models/edgetap-<size>.json).
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/kernels/correlation_read.hpp"

namespace edgetap::engine {

// What makes a point visible in the published output, stored with the weights
// ("visible_rule", "vis_threshold" at the JSON's top level).
enum class VisibleRule {
  visibility,                   // "vis": the visibility probability
  visibility_times_confidence,  // "vis*conf": visibility x confidence (an unsure position counts as hidden)
};

using kernels::CorrelationRead;

// The largest support grid side a model file or a camera may ask for (32 x 32 tracks).
inline constexpr int kMaxSupportGrid = 32;

struct ModelConfig {
  std::string version;
  std::array<int, 5> enc_channels{};  // encoder widths at strides 2, 4, 8, 16, 32
  int feat_dim = 0;                   // D: channels of every pyramid level
  std::vector<int> strides;           // pyramid strides, fine to coarse: 4, 8, 16, 32, or 2 first too
  int radius = 0;                     // correlation window (2r+1)^2 per level
  int query_patch = 1;                // query descriptors per level: a query_patch^2 neighbourhood
  int width = 0;                      // transformer width
  int heads = 0;
  int blocks = 0;
  int mlp_ratio = 0;
  int iters = 0;                      // refinement iterations per frame
  int window = 0;                     // causal window W (frames)
  int n_freq = 0;                     // Fourier frequencies of the displacement encoding
  float disp_scale = 1.f;
  int corr_hidden = 0;
  float pixel_mean = 0.f;
  float pixel_std = 1.f;
  int size_multiple = 1;              // input sides must be multiples of this
  std::vector<int> cross_after;       // temporal blocks followed by a cross-track attention layer
  // A frame's first iteration enters at the previous output plus this much of its last
  // displacement (engine/STREAMING.md, step 5); 0, absent from files before round 24: the previous output.
  float entry_velocity = 0.f;
  // A second descriptor set per track, sampled at its output in the previous frame and correlated
  // beside the query's (engine/STREAMING.md); false, absent from files before round 25. Needs
  // entry_velocity 0.
  bool recent_descriptors = false;
  // The query's descriptors of each level also correlated with the next coarser and the next finer
  // level's windows (training/edgetap/model.py, correlation_reads); false, absent from files before
  // round 27.
  bool cross_scale = false;
  VisibleRule visible_rule = VisibleRule::visibility;
  float visible_threshold = 0.5f;     // a point is visible when its rule's score is >= this
  // The published positions refined by template alignment after the network ("refinement" at
  // the JSON's top level: radius, iters, min_ncc, max_shift; RefinedSession); absent: the
  // network's outputs as they are.
  std::optional<TemplateAlignmentConfig> refinement;
  // Support tracks: a support_grid x support_grid grid of points started at a session's first
  // frame and tracked beside the caller's, never published, as context for the cross-track
  // layers ("support_grid" at the JSON's top level; SupportGridSession); 0, absent: none.
  int support_grid = 0;

  int levels() const noexcept { return static_cast<int>(strides.size()); }
  // A stride-2 level, from the encoder's side branch off its stem.
  bool fine_level() const noexcept { return !strides.empty() && strides.front() == 2; }
  int window_cells() const noexcept { return (2 * radius + 1) * (2 * radius + 1); }
  int query_cells() const noexcept { return query_patch * query_patch; }
  // Descriptor sets correlated per track: the query's, and with recent_descriptors the recent ones.
  int descriptor_sets() const noexcept { return recent_descriptors ? 2 : 1; }
  // The window correlations a track reads per iteration, in corr1's input order (correlation_reads).
  int correlation_read_count() const noexcept {
    return descriptor_sets() * levels() + (cross_scale ? 2 * (levels() - 1) : 0);
  }
  std::vector<CorrelationRead> correlation_reads() const;
  // Correlation values per track: every descriptor of every read against every window cell.
  int n_corr() const noexcept { return correlation_read_count() * query_cells() * window_cells(); }
  int token_in() const noexcept { return corr_hidden + 2 + 4 * n_freq + 1; }
  int head_dim() const noexcept { return width / heads; }
  // The score `visible_threshold` applies to.
  float visible_score(float visibility, float confidence) const noexcept {
    return visible_rule == VisibleRule::visibility ? visibility : visibility * confidence;
  }
  // Index of the cross-track layer after temporal block `block`, or -1.
  int cross_layer(int block) const noexcept {
    const auto it = std::find(cross_after.begin(), cross_after.end(), block);
    return it == cross_after.end() ? -1 : static_cast<int>(it - cross_after.begin());
  }
  // The refinement iterations a session runs when asked for `requested` (0 =
  // the model's own). The caches are laid out for the model's own iterations:
  // fewer can run, more cannot (std::invalid_argument).
  int iterations(int requested) const;
};

// Throws ModelError (see safetensors.hpp) naming the file and key on any problem.
ModelConfig load_model_config(const std::string& path);

}  // namespace edgetap::engine
