// Which fused kernels a CUDA session runs its FP16 step through, where the
// model's shapes allow them. By default the flash-style cross-track attention
// alone: W2 at 1,024 points 1.44 against 1.71-1.74 ms in a graph on an H100,
// parity unchanged (bench/NOTES-gpu.md, "The flash-style cross-track attention
// alone"). EDGETAP_CUDA_FUSED chooses otherwise: "0" none, "1" all three, or a
// comma list of cross_attention, mlp and layer_norm. The other two are slower
// than the cuBLAS path on an H100 (the three together: W2 at 1,024 points
// 2.02-2.04 against 1.90 ms; bench/NOTES-gpu.md, "The fused step"). The window
// correlation on the tensor cores is not among them: FP16 always takes it.
#pragma once

#include <cuda_fp16.h>

#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/kernels/cuda/cross_attention.hpp"
#include "edgetap/kernels/cuda/fused_mlp.hpp"
#include "edgetap/kernels/cuda/ln_gemm.hpp"

namespace edgetap::gpu {

inline constexpr const char* kFusedKernelsVariable = "EDGETAP_CUDA_FUSED";

struct FusedKernels {
  bool cross_attention = false;  // k::cross_attention: the cross-track scores on chip
  bool mlp = false;              // k::fused_mlp: each block's LayerNorm and MLP, its hidden layer on chip
  bool layer_norm = false;       // k::ln_gemm: each other LayerNorm with the product that reads it
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
    named.mlp = named.mlp || name == "mlp";
    named.layer_norm = named.layer_norm || name == "layer_norm";
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

// FP16: each fused kernel turned on that the model's shapes allow; else none.
template <class T>
FusedKernels fused_kernels_for(const engine::ModelConfig& c) {
  if (!std::is_same_v<T, __half>) return {};
  const FusedKernels on = fused_kernels_enabled();
  return {on.cross_attention && kernels::cuda::cross_attention_takes(c.head_dim()),
          on.mlp && kernels::cuda::fused_mlp_takes(c.width, c.mlp_ratio * c.width),
          on.layer_norm && kernels::cuda::ln_gemm_takes(c.width, 4)};
}

}  // namespace edgetap::gpu
