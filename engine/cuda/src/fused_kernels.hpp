// Which fused kernels a CUDA session runs its FP16 step through, where the
// model's shapes allow them. They are off unless EDGETAP_CUDA_FUSED=1: they pass
// their parity tests but are slower than the cuBLAS path on an H100 (W2 at 1,024
// points 2.02-2.04 against 1.90 ms: bench/NOTES-gpu.md, "The fused step"). The
// window correlation on the tensor cores is not among them: FP16 always takes it.
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

inline bool fused_kernels_enabled() {
  static const bool on = [] {
    const char* value = std::getenv(kFusedKernelsVariable);
    return value != nullptr && std::string_view(value) == "1";
  }();
  return on;
}

struct FusedKernels {
  bool cross_attention = false;  // k::cross_attention: the cross-track scores on chip
  bool mlp = false;              // k::fused_mlp: each block's LayerNorm and MLP, its hidden layer on chip
  bool layer_norm = false;       // k::ln_gemm: each other LayerNorm with the product that reads it
};

// FP16 with the fused kernels on: each one the model's shapes allow; else none.
template <class T>
FusedKernels fused_kernels_for(const engine::ModelConfig& c) {
  if (!std::is_same_v<T, __half> || !fused_kernels_enabled()) return {};
  return {kernels::cuda::cross_attention_takes(c.head_dim()), kernels::cuda::fused_mlp_takes(c.width, c.mlp_ratio * c.width),
          kernels::cuda::ln_gemm_takes(c.width, 4)};
}

}  // namespace edgetap::gpu
