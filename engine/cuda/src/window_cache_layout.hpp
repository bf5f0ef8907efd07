// Where each iteration's and block's keys (or values) lie in one track slot's
// window cache: per iteration, per block, per head (window + 1) slots of
// head_dim values (the window's W, then the query frame's anchor).
#pragma once

#include <cstddef>

#include "edgetap/engine/model_config.hpp"

namespace edgetap::gpu {

// One block's part of a slot's cache, for one iteration.
inline std::size_t cache_layer_stride(const engine::ModelConfig& c) {
  return static_cast<std::size_t>(c.heads) * (c.window + 1) * c.head_dim();
}

// A whole slot's cache: every iteration's every block.
inline std::size_t cache_slot_stride(const engine::ModelConfig& c) {
  return static_cast<std::size_t>(c.iters) * c.blocks * cache_layer_stride(c);
}

// Iteration it's block b within a slot's cache.
inline std::size_t cache_layer_offset(const engine::ModelConfig& c, int it, int b) {
  return (static_cast<std::size_t>(it) * c.blocks + b) * cache_layer_stride(c);
}

}  // namespace edgetap::gpu
