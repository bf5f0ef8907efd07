// Which fused kernels a CUDA session runs its FP16 step through, where the
// model's shapes allow them. By default the flash-style cross-track attention
// (W2 at 1,024 points 1.44 against 1.71-1.74 ms in a graph on an H100,
// bench/NOTES-gpu.md, "The flash-style cross-track attention alone"). The tile
// products (each LayerNorm, bias, GELU and residual sum with the product beside
// it; bench/NOTES-gpu.md, "The tile products") and the tracker program (the
// layers between two correlations in one persistent kernel, with both) are
// opt-in until measured. EDGETAP_CUDA_FUSED chooses otherwise: "0" none, "1"
// all, or a comma list of cross_attention, products and program. The window correlation on the tensor cores is
// not among them: FP16 always takes it.
#pragma once

#include <cuda_fp16.h>

#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/kernels/cuda/cross_attention.hpp"
#include "edgetap/kernels/cuda/tile_products.hpp"
#include "edgetap/kernels/cuda/tracker_program.hpp"

namespace edgetap::gpu {

inline constexpr const char* kFusedKernelsVariable = "EDGETAP_CUDA_FUSED";

struct FusedKernels {
  bool cross_attention = false;  // k::cross_attention: the cross-track scores on chip
  bool products = false;         // k::normed_product, k::half_product: the tracker's products with their neighbours
  bool program = false;          // k::run_tracker_program: a tracking step's layers between correlations, one kernel
};

// The kernels a value of EDGETAP_CUDA_FUSED names ("1": all; "0": none; else a
// comma list; an unknown name turns nothing on).
inline FusedKernels fused_kernels_named(std::string_view value) {
  if (value == "1") return {true, true, true};
  FusedKernels named;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view name = value.substr(0, comma);
    named.cross_attention = named.cross_attention || name == "cross_attention";
    named.products = named.products || name == "products";
    named.program = named.program || name == "program";
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
  }
  return named;
}

// FP16's fused kernels when EDGETAP_CUDA_FUSED is not set.
inline constexpr FusedKernels kDefaultFusedKernels{.cross_attention = true};

inline FusedKernels fused_kernels_enabled() {
  static const FusedKernels on = [] {
    const char* value = std::getenv(kFusedKernelsVariable);
    return value != nullptr ? fused_kernels_named(value) : kDefaultFusedKernels;
  }();
  return on;
}

// Whether the tile products take every product of the tracker's blocks,
// cross-track layers and head (at least one block: its projection takes the
// bias inp leaves pending).
inline bool tile_products_take(const engine::ModelConfig& c) {
  namespace k = kernels::cuda;
  const int hidden = c.mlp_ratio * c.width;
  return c.blocks > 0 && k::normed_product_takes(c.width, 3 * c.width) && k::normed_product_takes(c.width, hidden) &&
         k::normed_product_takes(c.width, 4) && k::half_product_takes(c.width, c.width) &&
         k::half_product_takes(hidden, c.width);
}

// FP16: each fused kernel turned on that the model's shapes allow; else none.
template <class T>
FusedKernels fused_kernels_for(const engine::ModelConfig& c) {
  if (!std::is_same_v<T, __half>) return {};
  const FusedKernels on = fused_kernels_enabled();
  const bool cross = on.cross_attention && kernels::cuda::cross_attention_takes(c.head_dim());
  const bool products = on.products && tile_products_take(c);
  // The program runs the tile products and, where the model has cross-track layers, the flash-style attention.
  const bool program = on.program && products && (cross || c.cross_after.empty()) &&
                       kernels::cuda::tracker_program_takes(c.width, c.mlp_ratio * c.width, c.head_dim());
  return {cross, products, program};
}

}  // namespace edgetap::gpu
