// A transformer block's LayerNorm + MLP in one kernel (fused_mlp.hpp).
//
// A block of 4 warps takes 16 rows. It normalizes them into shared memory
// (half), then walks the hidden layer 32 columns at a time: each warp computes
// 8 of the chunk's columns for the 16 rows (fc1), adds the bias and applies
// GELU into shared memory (half), and after a barrier accumulates the chunk's
// share of its own width / 4 output columns (fc2) in registers. The hidden
// layer never reaches DRAM; the weights are read straight from L2 into
// fragments, 16 bytes a lane, one phase ahead: fc2's during fc1, the next
// chunk's fc1 during fc2 (a warp alone on its SM quarter waits on L2 otherwise).
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

constexpr int kHiddenChunk = 32;  // hidden columns made and consumed at a time
constexpr int kFc1TilesPerWarp = kHiddenChunk / (kRowWarps * kMmaK);
constexpr int kFc2KBlocks = kHiddenChunk / kKBlock;

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }  // x Phi(x)

__device__ __forceinline__ float2 bias_pair(const float* bias, int col) { return make_float2(bias[col], bias[col + 1]); }

// Launch: blocks of kRowBlock rows, kRowWarps warps.
template <int W>
__global__ void __launch_bounds__(kRowWarps * kWarp)
    fused_mlp_kernel(float* x, const float* pending, int rows, const float* gamma, const float* beta,
                     const __half* fc1, const float* fc1_bias, const __half* fc2, int hidden) {
  constexpr int kOutTilesPerWarp = W / (kRowWarps * kMmaK);
  __shared__ __align__(16) __half normed[kRowBlock][padded_row(W)];
  __shared__ __align__(16) __half act[2][kRowBlock][padded_row(kHiddenChunk)];  // chunks alternate
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * kRowBlock;
  const int hw = warp * kFc1TilesPerWarp * kMmaK;     // this warp's first column of a chunk (fc1)
  const int out0 = warp * kOutTilesPerWarp * kMmaK;  // this warp's first output column (fc2)

  // fc1's fragments and bias of the first chunk, on their way while the rows are normalized.
  BFragments<W / kKBlock, kFc1TilesPerWarp> w1;
  load_fragments(w1, fc1, W, hw, 0);
  float2 bias[kFc1TilesPerWarp];
#pragma unroll
  for (int n = 0; n < kFc1TilesPerWarp; ++n) bias[n] = bias_pair(fc1_bias, hw + n * kMmaK + 2 * t);

  normalize_rows<W>(x, pending, rows, row0, gamma, beta, normed);
  __syncthreads();

  float out[kRowTiles][kOutTilesPerWarp][4] = {};
  for (int h0 = 0, chunk = 0; h0 < hidden; h0 += kHiddenChunk, ++chunk) {
    BFragments<kFc2KBlocks, kOutTilesPerWarp> w2;  // the chunk's share of fc2, loaded during fc1
    load_fragments(w2, fc2, hidden, out0, h0);
    float h[kRowTiles][kFc1TilesPerWarp][4] = {};
    multiply_fragments(h, normed, 0, w1);
    const bool more = h0 + kHiddenChunk < hidden;
    if (more) load_fragments(w1, fc1, W, h0 + kHiddenChunk + hw, 0);  // the next chunk's, during fc2
    __half (*a)[padded_row(kHiddenChunk)] = act[chunk % 2];
#pragma unroll
    for (int m = 0; m < kRowTiles; ++m) {
#pragma unroll
      for (int n = 0; n < kFc1TilesPerWarp; ++n) {
        const int col = hw + n * kMmaK + 2 * t;
        *reinterpret_cast<__half2*>(&a[m * kMmaRows + g][col]) =
            __floats2half2_rn(gelu(h[m][n][0] + bias[n].x), gelu(h[m][n][1] + bias[n].y));
        *reinterpret_cast<__half2*>(&a[m * kMmaRows + g + 8][col]) =
            __floats2half2_rn(gelu(h[m][n][2] + bias[n].x), gelu(h[m][n][3] + bias[n].y));
      }
    }
    if (more) {
#pragma unroll
      for (int n = 0; n < kFc1TilesPerWarp; ++n) {
        bias[n] = bias_pair(fc1_bias, h0 + kHiddenChunk + hw + n * kMmaK + 2 * t);
      }
    }
    // One barrier a chunk: the next chunk writes the other half of act, which every
    // warp finished reading before it passed this barrier.
    __syncthreads();
    multiply_fragments(out, a, 0, w2);
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
    throw std::invalid_argument("fused_mlp takes widths 32, 64, 128 or 256 and a hidden layer of a multiple of 32, not " +
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
