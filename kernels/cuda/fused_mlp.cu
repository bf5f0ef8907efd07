// A transformer block's LayerNorm + MLP in one kernel (fused_mlp.hpp).
//
// A block of 4 warps takes 32 rows. It normalizes them into shared memory
// (half), then walks the hidden layer 64 columns at a time: each warp computes
// 16 of the chunk's columns for the 32 rows (fc1), adds the bias and applies
// GELU into shared memory (half), and after a barrier accumulates the chunk's
// share of its own width / 4 output columns (fc2) in registers. The hidden
// layer never reaches DRAM; the weights are read straight from L2 into
// fragments, 16 bytes a lane.
//
// Each lane loads 8 consecutive k values (16 bytes) of A and of B and feeds them
// to four mma steps, two values each: lane t's values of step s are k = 8t + 2s
// and 8t + 2s + 1 of a 32-value k block, for A and B alike, so every product
// sums the same terms as in order.
#include "edgetap/kernels/cuda/fused_mlp.hpp"

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "device_common.cuh"
#include "edgetap/kernels/cuda/check.hpp"
#include "mma.cuh"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

constexpr int kMlpWarps = 4;
constexpr int kMlpRows = 2 * kMmaRows;  // rows per block
constexpr int kHiddenChunk = 64;        // hidden columns made and consumed at a time
constexpr int kKBlock = 32;             // k values per 16-byte load of 4 lanes' fragments
constexpr int kFc1TilesPerWarp = kHiddenChunk / (kMlpWarps * kMmaK);

// Shared rows of `cols` halves, padded to 64 bytes past a multiple of 128: the
// 16-byte fragment loads of 8 lanes (2 rows x 4 lanes) then touch 32 distinct banks.
__host__ __device__ constexpr int padded_row(int cols) { return (cols * 2) % 128 == 0 ? cols + 32 : cols; }

__device__ __forceinline__ uint4 load16(const __half* p) { return *reinterpret_cast<const uint4*>(p); }
__device__ __forceinline__ uint4 ldg16(const __half* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
__device__ __forceinline__ unsigned word(const uint4& v, int s) { return s == 0 ? v.x : s == 1 ? v.y : s == 2 ? v.z : v.w; }

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678f)); }  // x Phi(x)

// acc[m][n] += A (kMlpRows rows of shared `a` from column k0, 32 values) x B^T
// (`tiles` 8-row tiles of `b` from row n0, row stride ldb, columns k0..k0 + 31).
template <int kTiles, int kLda>
__device__ __forceinline__ void multiply_k_block(float (&acc)[2][kTiles][4], const __half (*a)[kLda], int k0,
                                                 const __half* b, int ldb, int n0, int bk0) {
  const int g = threadIdx.x % kWarp / 4, t = threadIdx.x % 4;
  uint4 a_rows[2][2];
#pragma unroll
  for (int m = 0; m < 2; ++m) {
    a_rows[m][0] = load16(&a[m * kMmaRows + g][k0 + 8 * t]);
    a_rows[m][1] = load16(&a[m * kMmaRows + g + 8][k0 + 8 * t]);
  }
#pragma unroll
  for (int n = 0; n < kTiles; ++n) {
    const uint4 b_col = ldg16(b + static_cast<std::size_t>(n0 + n * kMmaK + g) * ldb + bk0 + 8 * t);
#pragma unroll
    for (int m = 0; m < 2; ++m) {
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const unsigned a_frag[2] = {word(a_rows[m][0], s), word(a_rows[m][1], s)};
        mma_16x8x8(acc[m][n], a_frag, word(b_col, s));
      }
    }
  }
}

// Launch: blocks of kMlpRows rows, kMlpWarps warps.
template <int W>
__global__ void __launch_bounds__(kMlpWarps * kWarp)
    fused_mlp_kernel(float* x, const float* pending, int rows, const float* gamma, const float* beta,
                     const __half* fc1, const float* fc1_bias, const __half* fc2, int hidden) {
  constexpr int kOutTilesPerWarp = W / (kMlpWarps * kMmaK);
  constexpr int kPerLane = W / kWarp;
  __shared__ __align__(16) __half normed[kMlpRows][padded_row(W)];
  __shared__ __align__(16) __half act[kMlpRows][padded_row(kHiddenChunk)];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * kMlpRows;

  // x += pending, written back; its LayerNorm into shared memory (layer_norm_rows' arithmetic).
  for (int r = warp; r < kMlpRows; r += kMlpWarps) {
    const int row = row0 + r;
    if (row >= rows) {
      for (int j = lane; j < W; j += kWarp) normed[r][j] = __float2half_rn(0.f);
      continue;
    }
    float* xr = x + static_cast<std::size_t>(row) * W;
    float v[kPerLane], sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int j = lane + i * kWarp;
      v[i] = xr[j];
      if (pending != nullptr) {
        v[i] += pending[j];
        xr[j] = v[i];
      }
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

  // x += the MLP's output (its bias pending).
#pragma unroll
  for (int m = 0; m < 2; ++m) {
#pragma unroll
    for (int upper = 0; upper < 2; ++upper) {
      const int row = row0 + m * kMmaRows + g + 8 * upper;
      if (row >= rows) continue;
#pragma unroll
      for (int n = 0; n < kOutTilesPerWarp; ++n) {
        float2* p = reinterpret_cast<float2*>(x + static_cast<std::size_t>(row) * W + out0 + n * kMmaK + 2 * t);
        float2 v = *p;
        v.x += out[m][n][2 * upper];
        v.y += out[m][n][2 * upper + 1];
        *p = v;
      }
    }
  }
}

template <int W>
void launch(float* x, const float* pending, int rows, const float* gamma, const float* beta, const MlpWeights& mlp,
            cudaStream_t stream) {
  fused_mlp_kernel<W><<<blocks_of(rows, kMlpRows), kMlpWarps * kWarp, 0, stream>>>(
      x, pending, rows, gamma, beta, mlp.fc1, mlp.fc1_bias, mlp.fc2, mlp.hidden);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool fused_mlp_takes(int width, int hidden) {
  const bool width_ok = width == 32 || width == 64 || width == 128 || width == 256;
  return width_ok && hidden > 0 && hidden % kHiddenChunk == 0;
}

void fused_mlp(float* x, const float* pending_bias, int rows, const float* gamma, const float* beta,
               const MlpWeights& mlp, cudaStream_t stream) {
  if (!fused_mlp_takes(mlp.width, mlp.hidden)) {
    throw std::invalid_argument("fused_mlp takes widths 32, 64, 128 or 256 and a hidden layer of a multiple of 64, not " +
                                std::to_string(mlp.width) + " and " + std::to_string(mlp.hidden));
  }
  if (rows == 0) return;
  checked_count(static_cast<std::size_t>(rows) * mlp.width);
  switch (mlp.width) {
    case 32: launch<32>(x, pending_bias, rows, gamma, beta, mlp, stream); break;
    case 64: launch<64>(x, pending_bias, rows, gamma, beta, mlp, stream); break;
    case 128: launch<128>(x, pending_bias, rows, gamma, beta, mlp, stream); break;
    default: launch<256>(x, pending_bias, rows, gamma, beta, mlp, stream); break;
  }
}

}  // namespace edgetap::kernels::cuda
