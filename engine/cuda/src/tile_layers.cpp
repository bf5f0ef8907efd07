#include "tile_layers.hpp"

#include <algorithm>
#include <span>

#include "edgetap/kernels/cuda/cross_attention.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"
#include "window_cache_layout.hpp"

namespace edgetap::gpu {

namespace k = edgetap::kernels::cuda;

TileLayers::TileLayers(const engine::ModelConfig& config, const DeviceTrackerWeights<__half>& weights,
                       const Blas& blas, CrossTrackBlocks<__half>& cross_blocks, bool program, bool flash_cross)
    : c_(config), w_(weights), blas_(blas), cross_blocks_(cross_blocks), program_(program), flash_cross_(flash_cross) {}

void TileLayers::enqueue(const TileLayerBuffers& b, int it, int S, bool query_step, const float* pending,
                         cudaStream_t stream) {
  make_phases(b, it, pending);
  if (program_ && !query_step) {
    run_as_program(b, S, stream);
  } else {
    run_one_by_one(b, S, query_step, stream);
  }
}

// Per block: LayerNorm + qkv, the attention, the projection added to x with its
// bias and the one pending, LayerNorm + fc1 + bias + GELU into hidden, fc2 added
// to x with its bias; per cross-track layer: LayerNorm + qkv, the attention, the
// projection; then the head's LayerNorm + product.
void TileLayers::make_phases(const TileLayerBuffers& b, int it, const float* pending) {
  phases_.clear();
  auto added_to_x = [&](const DeviceLinear<__half>& l, const float* owed) {
    return k::ProductOut{.bias = l.bias.data(), .out = b.x, .add = true, .residual_bias = owed};
  };
  auto normed = [&](const DeviceLayerNorm& ln, const DeviceLinear<__half>& l, const float* owed,
                    const k::ProductOut& out) {
    phases_.push_back(k::normed_product_phase(b.x, owed, c_.width, ln.gamma.data(), ln.beta.data(), l.weight.data(),
                                              l.out, out));
  };
  auto added = [&](const DeviceLinear<__half>& l, const __half* in, const float* owed) {
    phases_.push_back(k::half_product_phase(in, l.in, l.weight.data(), l.out, added_to_x(l, owed)));
  };
  for (int blk = 0; blk < c_.blocks; ++blk) {
    const DeviceBlock<__half>& bw = w_.blocks[static_cast<std::size_t>(blk)];
    normed(bw.ln1, bw.qkv, pending, {.out = b.qkv});
    phases_.push_back(k::attend_phase(b.qkv, bw.qkv.bias.data(), cache_layer_offset(c_, it, blk), b.attended));
    added(bw.proj, b.attended, pending);
    pending = nullptr;
    normed(bw.ln2, bw.fc1, nullptr, {.bias = bw.fc1.bias.data(), .gelu = true, .out_half = b.hidden});
    added(bw.fc2, b.hidden, nullptr);
    if (const int xi = c_.cross_layer(blk); xi >= 0) {
      const DeviceCrossTrack<__half>& cw = w_.cross[static_cast<std::size_t>(xi)];
      normed(cw.ln, cw.qkv, nullptr, {.out = b.qkv});
      phases_.push_back(k::cross_phase(b.qkv, cw.qkv.bias.data(), b.attended));
      added(cw.proj, b.attended, nullptr);
    }
  }
  normed(w_.ln_out, w_.head, pending, {.out = b.head_acc});
}

// Each phase as the kernel it stands for; the cross-track attention on the
// query step only to the row itself (its values).
void TileLayers::run_one_by_one(const TileLayerBuffers& b, int S, bool query_step, cudaStream_t stream) const {
  const k::WindowCaches& wc = b.caches;
  for (const k::Phase& ph : phases_) {
    switch (ph.kind) {
      case k::PhaseKind::normed_product: {
        const k::ProductPhase& p = ph.product;
        k::normed_product(p.in.x, p.in.pending, S, p.depth, p.in.gamma, p.in.beta, p.weight, p.outputs, p.out, stream);
        break;
      }
      case k::PhaseKind::half_product: {
        const k::ProductPhase& p = ph.product;
        k::half_product(p.in.a, S, p.depth, p.weight, p.outputs, p.out, stream);
        break;
      }
      case k::PhaseKind::attend_cached:
        k::attend_cached(ph.attend.qkv, ph.attend.qkv_bias, wc.slots, S, c_.heads, c_.head_dim(), wc.window,
                         query_step, wc.keys, wc.values, wc.slot_stride, ph.attend.layer_offset, wc.rel_bias,
                         wc.query_frame, wc.clock, ph.attend.out, stream);
        break;
      case k::PhaseKind::cross_attention:
        if (query_step) {
          k::take_values(ph.cross.qkv, ph.cross.qkv_bias, S, c_.width, ph.cross.out, stream);
        } else if (flash_cross_) {
          k::cross_attention(ph.cross.qkv, ph.cross.qkv_bias, S, c_.heads, c_.head_dim(), ph.cross.out, stream);
        } else {
          cross_blocks_.attend(blas_, ph.cross.qkv, ph.cross.qkv_bias, S, c_.heads, c_.head_dim(), ph.cross.out,
                               stream);
        }
        break;
    }
  }
}

// The phases in launches of at most kMaxPhases.
void TileLayers::run_as_program(const TileLayerBuffers& b, int S, cudaStream_t stream) const {
  k::TrackerProgram p{};
  p.rows = S;
  p.width = c_.width;
  p.heads = c_.heads;
  p.caches = b.caches;
  for (std::size_t first = 0; first < phases_.size(); first += k::kMaxPhases) {
    const std::span<const k::Phase> launch =
        std::span(phases_).subspan(first, std::min<std::size_t>(k::kMaxPhases, phases_.size() - first));
    p.count = static_cast<int>(launch.size());
    std::copy(launch.begin(), launch.end(), p.phases);
    k::run_tracker_program(p, stream);
  }
}

}  // namespace edgetap::gpu
