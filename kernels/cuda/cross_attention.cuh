// The cross-track attention of one block of query rows and one head,
// flash-style (cross_attention.hpp; the method at the top of
// cross_attention.cu): shared by cross_attention_kernel and the tracker
// program's phases (tracker_program.cu).
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>

#include "device_common.cuh"
#include "mma.cuh"

namespace edgetap::kernels::cuda::detail {

constexpr int kCrossWarps = 4;
constexpr int kBlockRows = kMmaRows * kCrossWarps;  // query rows per block, a tile per warp
constexpr int kKeyTile = 64;                        // keys per shared-memory tile
constexpr int kSharedPad = 8;                       // halves after each shared row: conflict-free fragment loads
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float4 biased4(const float* row, const float* bias, int col) {
  const float4 v = __ldg(reinterpret_cast<const float4*>(row + col));
  const float4 b = __ldg(reinterpret_cast<const float4*>(bias + col));
  return make_float4(v.x + b.x, v.y + b.y, v.z + b.z, v.w + b.w);
}

// The largest of a value over the four lanes that hold one fragment row.
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// One tile of keys and values (bias added) in a thread's registers: its share of
// the tile's 4-value quads, loaded during the products on the tile before.
template <int DH>
struct KeyTile {
  static constexpr int kQuadsPerKey = DH / 4;
  static constexpr int kThreads = kCrossWarps * kWarp;
  static constexpr int kPerThread = kKeyTile * kQuadsPerKey / kThreads;
  static_assert(kThreads % kQuadsPerKey == 0, "a thread's quads share one column");
  float4 k[kPerThread], v[kPerThread];

  __device__ __forceinline__ static int key(int i) { return (threadIdx.x + i * kThreads) / kQuadsPerKey; }
  __device__ __forceinline__ static int depth() { return threadIdx.x % kQuadsPerKey * 4; }

  __device__ __forceinline__ void load(const float* qkv, const float* bias, std::size_t ld, int k_col, int v_col,
                                       int c0, int S) {
    const int d = depth();
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int c = c0 + key(i);
      k[i] = v[i] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (c < S) {
        const float* r = qkv + static_cast<std::size_t>(c) * ld;
        k[i] = biased4(r, bias, k_col + d);
        v[i] = biased4(r, bias, v_col + d);
      }
    }
  }

  // The keys row by row, the values transposed (each B fragment one 32-bit load).
  __device__ __forceinline__ void store(__half (*keys)[DH + kSharedPad], __half (*values_t)[kKeyTile + kSharedPad]) const {
    const int d = depth();
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int kk = key(i);
      *reinterpret_cast<__half2*>(&keys[kk][d]) = __floats2half2_rn(k[i].x, k[i].y);
      *reinterpret_cast<__half2*>(&keys[kk][d + 2]) = __floats2half2_rn(k[i].z, k[i].w);
      values_t[d][kk] = __float2half_rn(v[i].x);
      values_t[d + 1][kk] = __float2half_rn(v[i].y);
      values_t[d + 2][kk] = __float2half_rn(v[i].z);
      values_t[d + 3][kk] = __float2half_rn(v[i].w);
    }
  }
};

// A block's shared memory: one tile of keys (row by row) and values (transposed).
template <int DH>
struct CrossTile {
  __half keys[kKeyTile][DH + kSharedPad];
  __half values_t[DH][kKeyTile + kSharedPad];
};

// The calling block takes query rows block_row * kBlockRows on of head `head`. A block
// that takes another after it waits for all its warps first (the tile is reused).
template <int DH>
__device__ __forceinline__ void cross_attention_block(const float* qkv, const float* bias, int S, int width, __half* out,
                                      int block_row, int head, __half (*keys)[DH + kSharedPad],
                                                      __half (*values_t)[kKeyTile + kSharedPad]) {
  constexpr int kDepthChunks = DH / kMmaK;       // q . k in chunks of 8 values; o in 8-column tiles
  constexpr int kKeyChunks = kKeyTile / kMmaK;   // a key tile in 8-key tiles

  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int g = lane / 4, t = lane % 4;
  const std::size_t ld = 3 * static_cast<std::size_t>(width);
  const int q_col = head * DH, k_col = width + q_col, v_col = 2 * width + q_col;
  const int row0 = block_row * kBlockRows + warp * kMmaRows;

  // The warp's query rows as A fragments, scaled so that exp2 of a score is exp of score / sqrt(DH).
  const float q_scale = rsqrtf(static_cast<float>(DH)) * kLog2e;
  unsigned q_frag[kDepthChunks][2];
#pragma unroll
  for (int kc = 0; kc < kDepthChunks; ++kc) {
#pragma unroll
    for (int upper = 0; upper < 2; ++upper) {
      const int row = row0 + g + 8 * upper, col = q_col + kc * kMmaK + 2 * t;
      float a = 0.f, b = 0.f;
      if (row < S) {
        const float* r = qkv + static_cast<std::size_t>(row) * ld;
        a = (r[col] + bias[col]) * q_scale;
        b = (r[col + 1] + bias[col + 1]) * q_scale;
      }
      q_frag[kc][upper] = pack_half2(a, b);
    }
  }

  float o[kDepthChunks][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};  // rows g and g + 8 (in log2 units)
  float row_sum[2] = {0.f, 0.f};              // this lane's columns only; summed over the quad at the end

  KeyTile<DH> next;  // the tile after the one in shared memory, on its way from L2 during the products
  next.load(qkv, bias, ld, k_col, v_col, 0, S);
  for (int c0 = 0; c0 < S; c0 += kKeyTile) {
    __syncthreads();  // every warp is done with the last tile
    next.store(keys, values_t);
    __syncthreads();
    if (c0 + kKeyTile < S) next.load(qkv, bias, ld, k_col, v_col, c0 + kKeyTile, S);

    float s[kKeyChunks][4];
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nc = 0; nc < kKeyChunks; ++nc) {
      s[nc][0] = s[nc][1] = s[nc][2] = s[nc][3] = 0.f;
#pragma unroll
      for (int kc = 0; kc < kDepthChunks; ++kc) {
        mma_16x8x8(s[nc], q_frag[kc], half_pair(&keys[nc * kMmaK + g][kc * kMmaK + 2 * t]));
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (c0 + nc * kMmaK + 2 * t + (e & 1) >= S) s[nc][e] = -INFINITY;  // past the last row
        tile_max[e / 2] = fmaxf(tile_max[e / 2], s[nc][e]);
      }
    }
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m = fmaxf(row_max[r], quad_max(tile_max[r]));  // finite: key c0 is a row
      alpha[r] = exp2f(row_max[r] - m);
      row_max[r] = m;
      row_sum[r] *= alpha[r];
    }
#pragma unroll
    for (int nd = 0; nd < kDepthChunks; ++nd) {
      o[nd][0] *= alpha[0];
      o[nd][1] *= alpha[0];
      o[nd][2] *= alpha[1];
      o[nd][3] *= alpha[1];
    }
    unsigned p_frag[kKeyChunks][2];
#pragma unroll
    for (int nc = 0; nc < kKeyChunks; ++nc) {
      const float p0 = exp2f(s[nc][0] - row_max[0]), p1 = exp2f(s[nc][1] - row_max[0]);
      const float p2 = exp2f(s[nc][2] - row_max[1]), p3 = exp2f(s[nc][3] - row_max[1]);
      row_sum[0] += p0 + p1;
      row_sum[1] += p2 + p3;
      p_frag[nc][0] = pack_half2(p0, p1);
      p_frag[nc][1] = pack_half2(p2, p3);
    }
#pragma unroll
    for (int nd = 0; nd < kDepthChunks; ++nd) {
#pragma unroll
      for (int nc = 0; nc < kKeyChunks; ++nc) {
        mma_16x8x8(o[nd], p_frag[nc], half_pair(&values_t[nd * kMmaK + g][nc * kMmaK + 2 * t]));
      }
    }
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row0 + g + 8 * r;
    const float inv = 1.f / quad_sum(row_sum[r]);
    if (row >= S) continue;
    __half* o_row = out + static_cast<std::size_t>(row) * width + q_col;
#pragma unroll
    for (int nd = 0; nd < kDepthChunks; ++nd) {
      *reinterpret_cast<__half2*>(o_row + nd * kMmaK + 2 * t) = __floats2half2_rn(o[nd][2 * r] * inv, o[nd][2 * r + 1] * inv);
    }
  }
}

}  // namespace edgetap::kernels::cuda::detail
