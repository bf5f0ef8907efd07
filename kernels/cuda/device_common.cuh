// What the tracker's CUDA kernels share (track_ops.cu, sampling.cu): the
// launch constants, loads and stores of T as float, warp and block
// reductions, bilinear sampling of a pyramid level, and launch shapes.
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::kernels::cuda::detail {


constexpr int kWarp = 32;
constexpr int kThreads = 256;            // element-wise and row kernels
constexpr std::size_t kMaxBlocks = 4096;  // grid-stride loops cover the rest
constexpr std::size_t kMaxStaticShared = 48 * 1024;  // per block without an opt-in attribute

// ---- Loads and stores: T in memory, float in registers.

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half(v); }

// 8 consecutive values at a 16-byte aligned address.
__device__ __forceinline__ void load8(const float* p, float (&v)[8]) {
  const float4 a = __ldg(reinterpret_cast<const float4*>(p));
  const float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void load8(const __half* p, float (&v)[8]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void store8(float* p, const float (&v)[8]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void store8(__half* p, const float (&v)[8]) {
  uint4 raw;
  __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = raw;
}

// V consecutive channels: V = 8 where channels, strides and pointers allow
// 16-byte accesses, else V = 1.
template <int V, class T>
__device__ __forceinline__ void load_vec(const T* p, float (&v)[V]) {
  static_assert(V == 1 || V == 8, "vector width 1 or 8");
  if constexpr (V == 8) {
    load8(p, v);
  } else {
    v[0] = to_float(*p);
  }
}
template <int V, class T>
__device__ __forceinline__ void store_vec(T* p, const float (&v)[V]) {
  if constexpr (V == 8) {
    store8(p, v);
  } else {
    store(p, v[0]);
  }
}

template <class T>
bool aligned16(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// 16-byte accesses reach every descriptor and map cell when the channel count
// and the strides are multiples of 8 values and the base pointers are aligned.
template <class T>
bool vectorizable(const PyramidView<T>& pyramid, const T* descs, std::size_t slot_stride, std::size_t set_stride) {
  if (pyramid.channels % 8 != 0 || slot_stride % 8 != 0 || set_stride % 8 != 0 || !aligned16(descs)) return false;
  for (int l = 0; l < pyramid.levels; ++l) {
    if (!aligned16(pyramid.level[l])) return false;
  }
  return true;
}

// ---- Reductions.

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Every lane gets op over the warp.
template <class Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread gets op over the block; `scratch` holds kWarp floats and may be
// reused after the call.
template <class Op>
__device__ float block_reduce(float v, Op op, float identity, float* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_reduce(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < (blockDim.x + kWarp - 1) / kWarp ? scratch[lane] : identity;
  v = warp_reduce(v, op);
  __syncthreads();
  return v;
}

// ---- Bilinear sampling, shared by sample_descriptors and window_correlation.

template <class T>
struct LevelMap {
  const T* data;
  int height, width;
  float stride;
};

// One level of the pyramid, picked with constant indices (a run-time index
// into the parameter struct would copy it to local memory).
template <class T>
__device__ __forceinline__ LevelMap<T> level_map(const PyramidView<T>& p, int level) {
  LevelMap<T> m{p.level[0], p.height[0], p.width[0], p.stride[0]};
#pragma unroll
  for (int l = 1; l < kMaxLevels; ++l) {
    if (l == level) m = LevelMap<T>{p.level[l], p.height[l], p.width[l], p.stride[l]};
  }
  return m;
}

// A point in cell units as its top-left neighbour and the fractions past it.
struct BilinearCell {
  int x0, y0;
  float ax, ay;
};

__device__ __forceinline__ BilinearCell locate(float x, float y) {
  const float fx = floorf(x), fy = floorf(y);
  return {static_cast<int>(fx), static_cast<int>(fy), x - fx, y - fy};
}

// Channels c0 .. c0 + V of the bilinear sample at `b`, as cpu::bilinear_sample_hwc:
// the four floor neighbours weighted (1-ax)(1-ay), ax(1-ay), (1-ax)ay, ax ay;
// a neighbour outside the map (or of weight 0) contributes nothing.
template <int V, class T>
__device__ __forceinline__ void bilinear_sample(const LevelMap<T>& map, int channels, BilinearCell b, int c0,
                                                float (&out)[V]) {
  const float weight[4] = {(1 - b.ax) * (1 - b.ay), b.ax * (1 - b.ay), (1 - b.ax) * b.ay, b.ax * b.ay};
#pragma unroll
  for (int v = 0; v < V; ++v) out[v] = 0.f;
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    const int x = b.x0 + (n & 1), y = b.y0 + (n >> 1);
    if (x < 0 || x >= map.width || y < 0 || y >= map.height || weight[n] == 0.f) continue;
    float tap[V];
    load_vec<V>(map.data + (static_cast<std::size_t>(y) * map.width + x) * channels + c0, tap);
#pragma unroll
    for (int v = 0; v < V; ++v) out[v] += weight[n] * tap[v];
  }
}

// ---- Launch shapes.

// Values as a 32-bit count; throws where a grid-stride loop could overflow it.
inline unsigned checked_count(std::size_t n) {
  if (n > std::numeric_limits<unsigned>::max() - static_cast<std::size_t>(kThreads) * kMaxBlocks) {
    throw std::length_error("track_ops: " + std::to_string(n) + " values are too many for 32-bit indices");
  }
  return static_cast<unsigned>(n);
}

// Blocks of kThreads for a grid-stride loop over n values.
inline int grid_for(std::size_t n) { return static_cast<int>(std::min((n + kThreads - 1) / kThreads, kMaxBlocks)); }

// Blocks of `per_block` for one thread (or warp) per item.
inline int blocks_of(int items, int per_block) { return (items + per_block - 1) / per_block; }

}  // namespace edgetap::kernels::cuda::detail
