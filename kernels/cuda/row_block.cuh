// Blocks of 16 rows in shared memory (normalized, or staged as they are) and
// their products with weights read straight from L2 into tensor-core
// fragments, a batch ahead of their use (tile_products.cu).
//
// Each lane loads 8 consecutive k values (16 bytes) of A and of B and feeds them
// to four mma steps, two values each: lane t's values of step s are k = 8t + 2s
// and 8t + 2s + 1 of a 32-value k block, for A and B alike, so every product
// sums the same terms as in order.
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

#include <climits>
#include <cstddef>
#include <type_traits>

#include "device_common.cuh"
#include "mma.cuh"

namespace edgetap::kernels::cuda::detail {

constexpr int kRowWarps = 4;
// mma tiles of rows per block: 1 was 10-17% faster than 2 on an H100, for twice
// the weights read from L2 (bench/NOTES-gpu.md, "The fused step").
constexpr int kRowTiles = 1;
constexpr int kRowBlock = kRowTiles * kMmaRows;  // rows per block
constexpr int kKBlock = 32;              // k values per 16-byte load of 4 lanes' fragments

// Shared rows of `cols` halves, padded to 64 bytes past a multiple of 128: the
// 16-byte fragment loads of 8 lanes (2 rows x 4 lanes) then touch 32 distinct banks.
__host__ __device__ constexpr int padded_row(int cols) { return (cols * 2) % 128 == 0 ? cols + 32 : cols; }

// The row widths normalize_rows is built for.
constexpr bool row_block_takes(int width) { return width == 32 || width == 64 || width == 128 || width == 256; }

// The depths a block of staged rows is built for (stage_rows' K): 16 rows of
// 1,024 halves are 33 KB of shared memory, within sm_75's 48 KB.
constexpr bool staged_depth_takes(int depth) { return row_block_takes(depth) || depth == 512 || depth == 1024; }

// launch(std::integral_constant<int, K>{}) for K = depth, one of staged_depth_takes' depths.
template <class Launch>
void with_depth(int depth, Launch&& launch) {
  switch (depth) {
    case 32: launch(std::integral_constant<int, 32>{}); break;
    case 64: launch(std::integral_constant<int, 64>{}); break;
    case 128: launch(std::integral_constant<int, 128>{}); break;
    case 256: launch(std::integral_constant<int, 256>{}); break;
    case 512: launch(std::integral_constant<int, 512>{}); break;
    default: launch(std::integral_constant<int, 1024>{}); break;
  }
}

__device__ __forceinline__ uint4 load16(const __half* p) { return *reinterpret_cast<const uint4*>(p); }

// Rows row0 .. row0 + kRowBlock - 1 of x [rows][W]: the LayerNorm of x +
// pending (when given; layer_norm_rows' arithmetic) into `normed` as half; rows
// past the last as zeros. A warp per row; x is only read.
template <int W, int kLd>
__device__ void normalize_rows(const float* x, const float* pending, int rows, int row0, const float* gamma,
                               const float* beta, __half (*normed)[kLd]) {
  constexpr int kPerLane = W / kWarp;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  for (int r = warp; r < kRowBlock; r += kRowWarps) {
    const int row = row0 + r;
    if (row >= rows) {
      for (int j = lane; j < W; j += kWarp) normed[r][j] = __float2half_rn(0.f);
      continue;
    }
    const float* xr = x + static_cast<std::size_t>(row) * W;
    float v[kPerLane], sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int j = lane + i * kWarp;
      v[i] = pending != nullptr ? xr[j] + pending[j] : xr[j];
      sum += v[i];
    }
    const float mean = warp_reduce(sum, Sum{}) / static_cast<float>(W);
    float squares = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) squares += (v[i] - mean) * (v[i] - mean);
    const float inv = 1.f / sqrtf(warp_reduce(squares, Sum{}) / static_cast<float>(W) + 1e-5f);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int j = lane + i * kWarp;
      normed[r][j] = __float2half_rn((v[i] - mean) * inv * gamma[j] + beta[j]);
    }
  }
}

// Rows row0 .. row0 + kRowBlock - 1 of a [rows][K] (half, 16-byte aligned rows)
// into `staged` as they are, 16 bytes a thread; rows past the last as zeros.
template <int K, int kLd>
__device__ void stage_rows(const __half* a, int rows, int row0, __half (*staged)[kLd]) {
  constexpr int kLoadsPerRow = K / 8;
  for (int i = threadIdx.x; i < kRowBlock * kLoadsPerRow; i += kRowWarps * kWarp) {
    const int r = i / kLoadsPerRow, j = i % kLoadsPerRow * 8;
    const int row = row0 + r;
    const uint4 v = row < rows ? ldg16(a + static_cast<std::size_t>(row) * K + j) : make_uint4(0, 0, 0, 0);
    *reinterpret_cast<uint4*>(&staged[r][j]) = v;
  }
}

// B's fragments for kKBlocks consecutive k blocks of kTiles 8-row tiles of `b`
// (row stride ldb) from row n0, columns bk0 on: loaded ahead of the products that
// use them (multiply_fragments), so that a warp waits on L2 once per batch of
// loads rather than once per tile. Rows of b from b_rows on read as zeros.
template <int kKBlocks, int kTiles>
struct BFragments {
  uint4 v[kKBlocks][kTiles];
};

template <int kKBlocks, int kTiles>
__device__ __forceinline__ void load_fragments(BFragments<kKBlocks, kTiles>& f, const __half* b, int ldb, int n0,
                                               int bk0, int b_rows = INT_MAX) {
  const int g = threadIdx.x % kWarp / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int kb = 0; kb < kKBlocks; ++kb) {
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      const int b_row = n0 + n * kMmaK + g;
      f.v[kb][n] = b_row < b_rows ? ldg16(b + static_cast<std::size_t>(b_row) * ldb + bk0 + kb * kKBlock + 8 * t)
                                  : make_uint4(0, 0, 0, 0);
    }
  }
}

// acc[m][n] += A x B^T over the fragments' k blocks: A the kRowBlock shared rows
// of `a`, columns k0 .. k0 + 32 kKBlocks - 1, in order of k.
template <int kKBlocks, int kTiles, int kLda>
__device__ __forceinline__ void multiply_fragments(float (&acc)[kRowTiles][kTiles][4], const __half (*a)[kLda], int k0,
                                                   const BFragments<kKBlocks, kTiles>& f) {
  const int g = threadIdx.x % kWarp / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int kb = 0; kb < kKBlocks; ++kb) {
    const int ka = k0 + kb * kKBlock + 8 * t;
    uint4 a_rows[kRowTiles][2];
#pragma unroll
    for (int m = 0; m < kRowTiles; ++m) {
      a_rows[m][0] = load16(&a[m * kMmaRows + g][ka]);
      a_rows[m][1] = load16(&a[m * kMmaRows + g + 8][ka]);
    }
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
#pragma unroll
      for (int m = 0; m < kRowTiles; ++m) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          const unsigned a_frag[2] = {word(a_rows[m][0], s), word(a_rows[m][1], s)};
          mma_16x8x8(acc[m][n], a_frag, word(f.v[kb][n], s));
        }
      }
    }
  }
}

}  // namespace edgetap::kernels::cuda::detail
