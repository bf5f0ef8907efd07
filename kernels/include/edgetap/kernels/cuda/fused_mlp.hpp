// A transformer block's second half in one kernel: LayerNorm, the MLP's two
// products and its GELU, added to the residual stream, with the hidden layer
// kept on chip. The GPU twin of layer_norm_rows + fc1 + GELU + fc2 in
// engine::StreamingSession (checked in engine/cuda/tests/test_fused_mlp.cpp).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace edgetap::kernels::cuda {

// Whether fused_mlp takes rows of `width` values and a hidden layer of `hidden`
// (width 32, 64, 128 or 256; hidden a multiple of 32).
bool fused_mlp_takes(int width, int hidden);

// The weights of the MLP: fc1 [hidden][width] and fc2 [width][hidden] (output
// by input, as the matrix products take them), fc1's bias [hidden].
struct MlpWeights {
  const __half* fc1 = nullptr;
  const float* fc1_bias = nullptr;
  const __half* fc2 = nullptr;
  int width = 0, hidden = 0;
};

// For every row of x [rows][width]: x += pending_bias (written back, as
// layer_norm_rows), then x += fc2(GELU(fc1(LayerNorm(x)) + fc1_bias)); fc2's bias
// is left pending, for whoever reads x next (track_ops.hpp's convention).
// LayerNorm as layer_norm_rows (gamma, beta [width]); the normalized rows and the
// hidden layer are rounded to half for the products (mma.sync m16n8k8, sm_75 and
// later), which accumulate in float; GELU exact. Blocks of 16 rows, each reading
// the weights once from L2. std::invalid_argument for a shape fused_mlp_takes refuses.
void fused_mlp(float* x, const float* pending_bias, int rows, const float* gamma, const float* beta,
               const MlpWeights& mlp, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
