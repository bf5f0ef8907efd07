// A transformer block's LayerNorm + MLP in one kernel (fused_mlp.hpp).
//
// A block of 4 warps takes 32 rows. It normalizes them into shared memory
// (half), then walks the hidden layer 64 columns at a time: each warp computes
// 16 of the chunk's columns for the 32 rows (fc1), adds the bias and applies
// GELU into shared memory (half), and after a barrier accumulates the chunk's
// share of its own width / 4 output columns (fc2) in registers. The hidden
// layer never reaches DRAM; the weights are read straight from L2 into
// fragments, 16 bytes a lane.
#include "edgetap/kernels/cuda/fused_mlp.hpp"

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "edgetap/kernels/cuda/check.hpp"
#include "row_block.cuh"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

constexpr int kHiddenChunk = 64;  // hidden columns made and consumed at a time
constexpr int kFc1TilesPerWarp = kHiddenChunk / (kRowWarps * kMmaK);

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }  // x Phi(x)

// Launch: blocks of kRowBlock rows, kRowWarps warps.
template <int W>
__global__ void __launch_bounds__(kRowWarps * kWarp)
    fused_mlp_kernel(float* x, const float* pending, int rows, const float* gamma, const float* beta,
                     const __half* fc1, const float* fc1_bias, const __half* fc2, int hidden) {
  constexpr int kOutTilesPerWarp = W / (kRowWarps * kMmaK);
  __shared__ __align__(16) __half normed[kRowBlock][padded_row(W)];
  __shared__ __align__(16) __half act[kRowBlock][padded_row(kHiddenChunk)];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * kRowBlock;

  normalize_rows<W>(x, pending, rows, row0, gamma, beta, normed);
  __syncthreads();

  float out[2][kOutTilesPerWarp][4] = {};
  const int out0 = warp * kOutTilesPerWarp * kMmaK;  // this warp's first output column
  for (int h0 = 0; h0 < hidden; h0 += kHiddenChunk) {
    // fc1: this warp's 16 columns of the chunk.
    float h[2][kFc1TilesPerWarp][4] = {};
    const int hw = warp * kFc1TilesPerWarp * kMmaK;
#pragma unroll
    for (int k0 = 0; k0 < W; k0 += kKBlock) multiply_k_block(h, normed, k0, fc1, W, h0 + hw, k0);
#pragma unroll
    for (int m = 0; m < 2; ++m) {
#pragma unroll
      for (int n = 0; n < kFc1TilesPerWarp; ++n) {
        const int col = hw + n * kMmaK + 2 * t;
        const float b0 = fc1_bias[h0 + col], b1 = fc1_bias[h0 + col + 1];
        *reinterpret_cast<__half2*>(&act[m * kMmaRows + g][col]) =
            __floats2half2_rn(gelu(h[m][n][0] + b0), gelu(h[m][n][1] + b1));
        *reinterpret_cast<__half2*>(&act[m * kMmaRows + g + 8][col]) =
            __floats2half2_rn(gelu(h[m][n][2] + b0), gelu(h[m][n][3] + b1));
      }
    }
    __syncthreads();
    // fc2: the chunk's share of this warp's output columns.
#pragma unroll
    for (int k0 = 0; k0 < kHiddenChunk; k0 += kKBlock) multiply_k_block(out, act, k0, fc2, hidden, out0, h0 + k0);
    __syncthreads();  // the next chunk overwrites act
  }

  store_tiles(out, rows, row0, x, W, out0, W, /*add=*/true);  // x += the MLP's output (its bias pending)
}

}  // namespace

bool fused_mlp_takes(int width, int hidden) {
  return row_block_takes(width) && hidden > 0 && hidden % kHiddenChunk == 0;
}

void fused_mlp(float* x, const float* pending_bias, int rows, const float* gamma, const float* beta,
               const MlpWeights& mlp, cudaStream_t stream) {
  if (!fused_mlp_takes(mlp.width, mlp.hidden)) {
    throw std::invalid_argument("fused_mlp takes widths 32, 64, 128 or 256 and a hidden layer of a multiple of 64, not " +
                                std::to_string(mlp.width) + " and " + std::to_string(mlp.hidden));
  }
  if (rows == 0) return;
  checked_count(static_cast<std::size_t>(rows) * mlp.width);
  with_row_width(mlp.width, [&](auto w) {
    fused_mlp_kernel<decltype(w)::value><<<blocks_of(rows, kRowBlock), kRowWarps * kWarp, 0, stream>>>(
        x, pending_bias, rows, gamma, beta, mlp.fc1, mlp.fc1_bias, mlp.fc2, mlp.hidden);
  });
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace edgetap::kernels::cuda
