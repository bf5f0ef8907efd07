// One block of a tile product (tile_products.hpp; the method at the top of
// tile_products.cu): shared by tile_product_kernel and the tracker program's
// phases (tracker_program.cu).
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>

#include "edgetap/kernels/cuda/tile_products.hpp"
#include "row_block.cuh"

namespace edgetap::kernels::cuda::detail {

constexpr int kTilesPerWarp = 2;  // 8-column mma tiles a warp owns
constexpr int kColumnBlock = kRowWarps * kTilesPerWarp * kMmaK;  // output columns per block
constexpr int kKChunk = 256;  // k values whose fragments a warp holds at once

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }  // x Phi(x)

// The accumulators of the warp's tiles, from column col0, through the epilogue
// into the block's rows of the output; columns from `outputs` on and rows past
// the last are left out.
__device__ __forceinline__ void store_products(const float (&acc)[kRowTiles][kTilesPerWarp][4], int rows, int row0,
                                               int col0, int outputs, const ProductOut& o) {
  const int g = threadIdx.x % kWarp / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int m = 0; m < kRowTiles; ++m) {
#pragma unroll
    for (int upper = 0; upper < 2; ++upper) {
      const int row = row0 + m * kMmaRows + g + 8 * upper;
      if (row >= rows) continue;
#pragma unroll
      for (int n = 0; n < kTilesPerWarp; ++n) {
        const int col = col0 + n * kMmaK + 2 * t;
        if (col >= outputs) continue;
        float2 v = make_float2(acc[m][n][2 * upper], acc[m][n][2 * upper + 1]);
        if (o.bias != nullptr) {
          v.x += o.bias[col];
          v.y += o.bias[col + 1];
        }
        if (o.gelu) v = make_float2(gelu(v.x), gelu(v.y));
        const std::size_t at = static_cast<std::size_t>(row) * outputs + col;
        if (o.out_half != nullptr) {
          *reinterpret_cast<__half2*>(o.out_half + at) = __floats2half2_rn(v.x, v.y);
          continue;
        }
        float2* p = reinterpret_cast<float2*>(o.out + at);
        if (o.add) {
          const float2 before = *p;
          v.x += before.x;
          v.y += before.y;
          if (o.residual_bias != nullptr) {
            v.x += o.residual_bias[col];
            v.y += o.residual_bias[col + 1];
          }
        }
        *p = v;
      }
    }
  }
}

// A block's shared memory: its rows, normalized or staged, as half.
template <int K>
struct TileRows {
  __half a[kRowBlock][padded_row(K)];
};

// The calling block takes rows block_row * kRowBlock on and columns block_col * kColumnBlock
// on. A block that takes another after it waits for all its warps first (the rows are reused).
template <int K, bool kNormalize>
__device__ void tile_product_block(const ProductRows& in, int rows, const __half* weight, int outputs, const ProductOut& o,
                                   int block_row, int block_col, TileRows<K>& tile) {
  constexpr int kChunk = K < kKChunk ? K : kKChunk;
  constexpr int kChunkBlocks = kChunk / kKBlock;
  auto& a = tile.a;
  const int warp = threadIdx.x / kWarp;
  const int row0 = block_row * kRowBlock;
  const int col0 = block_col * kColumnBlock + warp * kTilesPerWarp * kMmaK;
  BFragments<kChunkBlocks, kTilesPerWarp> next;
  load_fragments(next, weight, K, col0, 0, outputs);
  if constexpr (kNormalize) {
    normalize_rows<K>(in.x, in.pending, rows, row0, in.gamma, in.beta, a);
  } else {
    stage_rows<K>(in.a, rows, row0, a);
  }
  __syncthreads();

  float acc[kRowTiles][kTilesPerWarp][4] = {};
#pragma unroll 1
  for (int k0 = 0; k0 < K; k0 += kChunk) {
    const BFragments<kChunkBlocks, kTilesPerWarp> now = next;
    if (k0 + kChunk < K) load_fragments(next, weight, K, col0, k0 + kChunk, outputs);
    multiply_fragments(acc, a, k0, now);
  }
  store_products(acc, rows, row0, col0, outputs, o);
}

}  // namespace edgetap::kernels::cuda::detail
