// Whether a CUDA session runs its FP16 step through the fused kernels
// (k::cross_attention, k::fused_mlp) where the model's shapes allow them. They are
// off unless EDGETAP_CUDA_FUSED=1 until their parity tests and the session tests
// have passed on a GPU (bench/NOTES-gpu.md, "the cross-track attention in one kernel").
#pragma once

#include <cstdlib>
#include <string_view>

namespace edgetap::gpu {

inline constexpr const char* kFusedKernelsVariable = "EDGETAP_CUDA_FUSED";

inline bool fused_kernels_enabled() {
  static const bool on = [] {
    const char* value = std::getenv(kFusedKernelsVariable);
    return value != nullptr && std::string_view(value) == "1";
  }();
  return on;
}

}  // namespace edgetap::gpu
