// The tracker's products with their LayerNorm and epilogue (tile_products.hpp).
//
// A block of 4 warps takes 16 rows and 64 output columns (16 a warp): the
// grid's x walks the rows, its y the columns, so a product of 512 rows by 768
// columns runs as 32 x 12 blocks. The block normalizes its rows (or stages them
// as they are) into shared memory while each warp loads its first 256 k values
// of weight fragments straight from L2; the products then walk k 256 at a time,
// the next fragments loaded during the current ones' products. A row block's
// LayerNorm is made once per column block: cheap beside the weights at the
// tracker's widths (a row of 256 floats against 64 x 256 halves of weights).
#include "edgetap/kernels/cuda/tile_products.hpp"

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

constexpr int kTilesPerWarp = 2;  // 8-column mma tiles a warp owns
constexpr int kColumnBlock = kRowWarps * kTilesPerWarp * kMmaK;  // output columns per block
constexpr int kKChunk = 256;  // k values whose fragments a warp holds at once

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }  // x Phi(x)

// Where a block's A rows come from: LayerNorm(x + pending) or half rows as they are.
struct RowsIn {
  const float* x;
  const float* pending;
  const float* gamma;
  const float* beta;
  const __half* a;
};

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

// Launch: (row blocks of kRowBlock, column blocks of kColumnBlock), kRowWarps warps.
template <int K, bool kNormalize>
__global__ void __launch_bounds__(kRowWarps * kWarp)
    tile_product_kernel(RowsIn in, int rows, const __half* weight, int outputs, ProductOut o) {
  constexpr int kChunk = K < kKChunk ? K : kKChunk;
  constexpr int kChunkBlocks = kChunk / kKBlock;
  __shared__ __align__(16) __half a[kRowBlock][padded_row(K)];
  const int warp = threadIdx.x / kWarp;
  const int row0 = blockIdx.x * kRowBlock;
  const int col0 = blockIdx.y * kColumnBlock + warp * kTilesPerWarp * kMmaK;
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

bool writes_somewhere(const ProductOut& o) { return (o.out != nullptr) != (o.out_half != nullptr); }

template <bool kNormalize>
void launch_product(const RowsIn& in, int rows, int depth, const __half* weight, int outputs, const ProductOut& o,
                    cudaStream_t stream) {
  if (rows == 0) return;
  if (!writes_somewhere(o)) throw std::invalid_argument("a tile product writes either float or half rows");
  checked_count(static_cast<std::size_t>(rows) * (depth > outputs ? depth : outputs));
  const dim3 grid(blocks_of(rows, kRowBlock), blocks_of(outputs, kColumnBlock));
  with_depth(depth, [&](auto k) {
    constexpr int K = decltype(k)::value;
    if constexpr (!kNormalize || row_block_takes(K)) {  // the LayerNorm's widths only
      tile_product_kernel<K, kNormalize><<<grid, kRowWarps * kWarp, 0, stream>>>(in, rows, weight, outputs, o);
    }
  });
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool normed_product_takes(int width, int outputs) {
  return row_block_takes(width) && outputs > 0 && outputs % 2 == 0;
}

bool half_product_takes(int depth, int outputs) {
  return staged_depth_takes(depth) && outputs > 0 && outputs % 2 == 0;
}

void normed_product(const float* x, const float* pending_bias, int rows, int width, const float* gamma,
                    const float* beta, const __half* weight, int outputs, const ProductOut& out, cudaStream_t stream) {
  if (!normed_product_takes(width, outputs)) {
    throw std::invalid_argument("normed_product takes widths 32, 64, 128 or 256 and an even number of outputs, not " +
                                std::to_string(width) + " and " + std::to_string(outputs));
  }
  launch_product<true>(RowsIn{x, pending_bias, gamma, beta, nullptr}, rows, width, weight, outputs, out, stream);
}

void half_product(const __half* a, int rows, int depth, const __half* weight, int outputs, const ProductOut& out,
                  cudaStream_t stream) {
  if (!half_product_takes(depth, outputs)) {
    throw std::invalid_argument("half_product takes depths 32, 64, 128, 256, 512 or 1024 and an even number of "
                                "outputs, not " + std::to_string(depth) + " and " + std::to_string(outputs));
  }
  launch_product<false>(RowsIn{nullptr, nullptr, nullptr, nullptr, a}, rows, depth, weight, outputs, out, stream);
}

}  // namespace edgetap::kernels::cuda
