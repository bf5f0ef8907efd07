// The tracker's CUDA kernels (declared in track_ops.hpp), each the twin of a
// CPU reference (kernels/cpu/, engine::StreamingSession::step). Storage is T
// (float or __half), arithmetic float. Nothing here allocates or
// synchronizes, so a step can be captured in a CUDA graph.
//
// Element-wise kernels are one thread per value over a grid-stride loop with
// 32-bit indices (the launcher checks the count fits); row kernels are one
// warp or one block per row.
#include "edgetap/kernels/cuda/track_ops.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::kernels::cuda {

namespace {

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

// ---- Kernels.

// Launch: one thread per row.
__global__ void entry_points_kernel(const int* slots, int S, const float2* query, const float2* position,
                                    const float2* previous, float velocity, bool query_step, float2* points) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= S) return;
  const int s = slots[i];
  const float2 p = position[s], q = previous[s];
  points[i] = query_step ? query[s] : make_float2(p.x + velocity * (p.x - q.x), p.y + velocity * (p.y - q.y));
}

template <class T>
struct SampleParams {
  PyramidView<T> pyramid;
  const int* slots;
  const float2* points;
  int S, query_patch;
  T* descs;
  std::size_t slot_stride;
};

// descs[slot][level][j][c] = bilinear(level, point / stride + offset_j)[c].
// Launch: grid-stride, one thread per V channels of one (row, level, j).
template <class T, int V>
__global__ void __launch_bounds__(kThreads) sample_descriptors_kernel(SampleParams<T> p) {
  const int C = p.pyramid.channels, qc = p.query_patch * p.query_patch, half = p.query_patch / 2;
  const unsigned chunks = C / V, per_level = qc * chunks, per_row = p.pyramid.levels * per_level;
  const unsigned n = p.S * per_row;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int row = i / per_row, level = i % per_row / per_level, j = i % per_level / chunks;
    const int c0 = i % chunks * V;
    const LevelMap<T> map = level_map(p.pyramid, level);
    const float2 pt = p.points[row];
    const float dx = static_cast<float>(j % p.query_patch - half), dy = static_cast<float>(j / p.query_patch - half);
    float v[V];
    bilinear_sample<V>(map, C, locate(pt.x / map.stride + dx, pt.y / map.stride + dy), c0, v);
    const std::size_t at = p.slots[row] * p.slot_stride + static_cast<std::size_t>(level * qc + j) * C + c0;
    store_vec<V>(p.descs + at, v);
  }
}

template <class T>
struct CorrelationParams {
  PyramidView<T> pyramid;
  const int* slots;
  const float2* points;
  const T* descs;
  std::size_t slot_stride, set_stride;
  int rows, radius, sets, query_cells;
  float scale;  // 1 / sqrt(channels)
  T* corr;
};

constexpr int kCorrWarps = 4;       // warps per block, one (row, level) each
constexpr int kMaxCorrDescs = 18;   // descriptors per level: 2 sets x a 3x3 query patch
constexpr int kCellsPerLane = 2;    // window cells a lane sums at once

std::size_t correlation_shared_bytes(int channels, int n_desc) {
  return static_cast<std::size_t>(kCorrWarps) * n_desc * channels * sizeof(float);
}

// V floats into shared memory (16-byte aligned for V = 8).
template <int V>
__device__ __forceinline__ void store_shared(float* dst, const float (&v)[V]) {
  if constexpr (V == 8) {
    reinterpret_cast<float4*>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    dst[0] = v[0];
  }
}

// V descriptor values from shared memory (16-byte aligned for V = 8).
template <int V>
__device__ __forceinline__ void load_shared(const float* src, float (&v)[V]) {
  if constexpr (V == 8) {
    const float4 a = reinterpret_cast<const float4*>(src)[0], b = reinterpret_cast<const float4*>(src)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
    v[0] = src[0];
  }
}

// The local correlation of one row at one level, for every descriptor of
// every set: corr[row][set][level][j][cell] = scale * dot(desc[set][level][j],
// bilinear(level, point / stride + cell offset)).
// Launch: one warp per (row, level), kCorrWarps warps per block, dynamic
// shared memory correlation_shared_bytes: each warp's descriptors as float.
// The warp loads its descriptors once; each lane then takes window cells
// (cells lane, lane + 32, ...), samples each cell's V channels at a time (4
// taps) and adds them into all the descriptors' sums held in registers, so a
// cell is sampled once for every descriptor and no block-wide barrier is needed.
// Per row, with D channels, L levels, n = sets * query_cells descriptors per
// level, k = 2r + 1 and b = sizeof(T) bytes:
//   DRAM at least: descriptors n L D b + output n L k^2 b + 12 (point, slot);
//   the map cells touched, L (k+1)^2 D b, come from L2 where tracks are close
//   (every cell is read by up to 4 taps, the repeats hit L1).
//   FLOPs: sampling 8 L k^2 D, dots 2 n L k^2 D.
//   D = 64, L = 4, query_patch 3, sets 1, r = 3, FP16 (edgetap-small): 4.6 KB
//   descriptors + 3.5 KB output from DRAM, 25.6 KB of map cells; 0.10 + 0.45 MFLOP.
template <class T, int V>
__global__ void __launch_bounds__(kCorrWarps * kWarp) window_correlation_kernel(CorrelationParams<T> p) {
  extern __shared__ float4 correlation_shared[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, levels = p.pyramid.levels;
  const int task = blockIdx.x * kCorrWarps + warp;
  if (task >= p.rows * levels) return;  // the whole warp
  const int row = task / levels, level = task % levels;
  const int C = p.pyramid.channels, k = 2 * p.radius + 1, cells = k * k, qc = p.query_cells, n_desc = p.sets * qc;
  float* descs = reinterpret_cast<float*>(correlation_shared) + static_cast<std::size_t>(warp) * n_desc * C;
  const T* row_descs = p.descs + p.slots[row] * p.slot_stride + static_cast<std::size_t>(level) * qc * C;
  for (int i = lane * V; i < n_desc * C; i += kWarp * V) {
    const int d = i / C, c = i % C;
    float v[V];
    load_vec<V>(row_descs + (d / qc) * p.set_stride + static_cast<std::size_t>(d % qc) * C + c, v);
    store_shared<V>(descs + i, v);
  }
  __syncwarp();

  const LevelMap<T> map = level_map(p.pyramid, level);
  const float2 pt = p.points[row];
  const BilinearCell centre = locate(pt.x / map.stride, pt.y / map.stride);
  T* out = p.corr + static_cast<std::size_t>(row) * n_desc * levels * cells;
  // Each lane takes kCellsPerLane cells at once (lane, lane + 32): one read of
  // a descriptor chunk from shared memory feeds both cells' sums.
  for (int first = 0; first < cells; first += kCellsPerLane * kWarp) {
    BilinearCell b[kCellsPerLane];
    bool in_window[kCellsPerLane];
#pragma unroll
    for (int e = 0; e < kCellsPerLane; ++e) {
      const int cell = first + e * kWarp + lane;
      in_window[e] = cell < cells;
      b[e] = centre;
      b[e].x0 += cell % k - p.radius;
      b[e].y0 += cell / k - p.radius;
    }
    if (!in_window[0]) break;
    float acc[kCellsPerLane][kMaxCorrDescs] = {};
    for (int c0 = 0; c0 < C; c0 += V) {
      float v[kCellsPerLane][V];
#pragma unroll
      for (int e = 0; e < kCellsPerLane; ++e) {
        if (in_window[e]) {
          bilinear_sample<V>(map, C, b[e], c0, v[e]);
        } else {
#pragma unroll
          for (int u = 0; u < V; ++u) v[e][u] = 0.f;
        }
      }
#pragma unroll
      for (int d = 0; d < kMaxCorrDescs; ++d) {
        if (d >= n_desc) break;
        float q[V];
        load_shared<V>(descs + d * C + c0, q);
#pragma unroll
        for (int e = 0; e < kCellsPerLane; ++e) {
#pragma unroll
          for (int u = 0; u < V; ++u) acc[e][d] += v[e][u] * q[u];
        }
      }
    }
#pragma unroll
    for (int e = 0; e < kCellsPerLane; ++e) {
      if (!in_window[e]) continue;
      const int cell = first + e * kWarp + lane;
#pragma unroll
      for (int d = 0; d < kMaxCorrDescs; ++d) {
        if (d >= n_desc) break;
        const int set = d / qc, j = d % qc;
        store(out + ((set * levels + level) * qc + j) * cells + cell, acc[e][d] * p.scale);
      }
    }
  }
}

// Launch: grid-stride, one thread per value.
template <class T>
__global__ void __launch_bounds__(kThreads) bias_activation_kernel(const float* acc, const float* bias, unsigned n_values,
                                                                  unsigned n, bool gelu, T* out) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_values; i += gridDim.x * blockDim.x) {
    const float x = acc[i] + bias[i % n];
    store(out + i, gelu ? 0.5f * x * (1.f + erff(x * 0.70710678f)) : x);  // exact GELU, x Phi(x)
  }
}

// Launch: grid-stride, one thread per value.
__global__ void __launch_bounds__(kThreads) broadcast_row_kernel(const float* row, unsigned n_values, unsigned n,
                                                                float* x) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_values; i += gridDim.x * blockDim.x) x[i] = row[i % n];
}

constexpr int kRowsPerBlock = kThreads / kWarp;

// LayerNorm of each row (two passes, mean then squared deviations, as
// cpu::layer_norm_rows), after adding the pending bias (if any) to the row and
// writing it back. Each lane reads back only the columns it wrote itself, so
// the write-back needs no synchronization. Launch: one warp per row,
// kRowsPerBlock rows per block.
template <class T>
__global__ void __launch_bounds__(kThreads) layer_norm_kernel(float* in, const float* pending_bias, int rows, int width,
                                                             const float* gamma, const float* beta, T* out) {
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  float* x = in + static_cast<std::size_t>(row) * width;
  float sum = 0.f;
  if (pending_bias != nullptr) {
    for (int j = lane; j < width; j += kWarp) {
      const float v = x[j] + pending_bias[j];
      x[j] = v;
      sum += v;
    }
  } else {
    for (int j = lane; j < width; j += kWarp) sum += x[j];
  }
  const float mean = warp_reduce(sum, Sum{}) / static_cast<float>(width);
  float squares = 0.f;
  for (int j = lane; j < width; j += kWarp) squares += (x[j] - mean) * (x[j] - mean);
  const float inv = 1.f / sqrtf(warp_reduce(squares, Sum{}) / static_cast<float>(width) + 1e-5f);
  T* y = out + static_cast<std::size_t>(row) * width;
  for (int j = lane; j < width; j += kWarp) store(y + j, (x[j] - mean) * inv * gamma[j] + beta[j]);
}

template <class T>
struct TokenParams {
  const float* hidden;
  const float* bias;
  const float2* points;
  const float2* query;
  const int* slots;
  int corr_hidden, n_freq;
  unsigned n_values;
  float disp_scale;
  bool query_step;
  T* token;
};

// token[r] = [hidden[r] + bias, d, sin/cos(pi 2^f d) per frequency, anchor flag],
// d = (points[r] - query[slot]) / disp_scale, engine::StreamingSession's order.
// Launch: grid-stride, one thread per value.
template <class T>
__global__ void __launch_bounds__(kThreads) token_inputs_kernel(TokenParams<T> p) {
  const unsigned per_row = p.corr_hidden + 3 + 4 * p.n_freq;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n_values; i += gridDim.x * blockDim.x) {
    const unsigned row = i / per_row;
    const int c = static_cast<int>(i % per_row), e = c - p.corr_hidden;
    float v;
    if (e < 0) {
      v = p.hidden[row * p.corr_hidden + c] + p.bias[c];
    } else if (e == 2 + 4 * p.n_freq) {
      v = p.query_step ? 1.f : 0.f;
    } else {
      const float2 pt = p.points[row], q = p.query[p.slots[row]];
      const float dx = (pt.x - q.x) / p.disp_scale, dy = (pt.y - q.y) / p.disp_scale;
      if (e < 2) {
        v = e == 0 ? dx : dy;
      } else {
        // sin(pi 2^f d) as sinpi(2^f d): the scaling is exact and the range
        // reduction needs no local-memory table (sinf's path for huge arguments).
        const int f = (e - 2) / 4, part = (e - 2) % 4;
        const float turns = ldexpf(part % 2 == 0 ? dx : dy, f);
        v = part < 2 ? sinpif(turns) : cospif(turns);
      }
    }
    store(p.token + i, v);
  }
}

template <class T>
struct AttendParams {
  const float* qkv;
  const float* qkv_bias;
  const int* slots;
  int rows, heads, head_dim, window;
  bool query_step;
  T* keys;
  T* values;
  std::size_t slot_stride, layer_offset;
  const float* rel_bias;
  const std::int64_t* query_frame;
  const FrameClock* clock;
  float scale;
  T* out;
};

constexpr int kAttendWarps = 4;
constexpr int kDimsPerLane = 2;
constexpr int kMaxHeadDim = kDimsPerLane * kWarp;

// One (row, head): reads q, k and v with the qkv bias added, stores k and v in
// the cache (window slot t % W, and the anchor slot W on the query step), then
// attends over the slots in (engine::StreamingSession::attention_bias) with an
// online softmax. Each lane owns head dimensions lane and lane + 32 and reads
// back only its own stores.
// Launch: one warp per (row, head), kAttendWarps warps per block.
template <class T>
__global__ void __launch_bounds__(kAttendWarps * kWarp) attend_cached_kernel(AttendParams<T> p) {
  const int pair = blockIdx.x * kAttendWarps + threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (pair >= p.rows * p.heads) return;  // the whole warp
  const int row = pair / p.heads, h = pair % p.heads, dh = p.head_dim, W = p.window, width = p.heads * dh;
  const int slot = p.slots[row];
  const float* q = p.qkv + static_cast<std::size_t>(row) * 3 * width + h * dh;
  const float* qkv_bias = p.qkv_bias + h * dh;
  const std::size_t cache = slot * p.slot_stride + p.layer_offset + static_cast<std::size_t>(h) * (W + 1) * dh;
  T* keys = p.keys + cache;
  T* values = p.values + cache;
  const std::int64_t t = p.clock->t;
  const int current = static_cast<int>(t % W);

  float query[kDimsPerLane];
#pragma unroll
  for (int u = 0; u < kDimsPerLane; ++u) {
    const int d = lane + u * kWarp;
    query[u] = 0.f;
    if (d >= dh) continue;
    query[u] = q[d] + qkv_bias[d];
    const float k = q[width + d] + qkv_bias[width + d], v = q[2 * width + d] + qkv_bias[2 * width + d];
    store(keys + current * dh + d, k);
    store(values + current * dh + d, v);
    if (p.query_step) {
      store(keys + W * dh + d, k);
      store(values + W * dh + d, v);
    }
  }

  const std::int64_t query_frame = p.query_frame[slot], first = query_frame > 0 ? query_frame : 0;
  const float* rel = p.rel_bias + h * (W + 1);
  float best = -INFINITY, total = 0.f, acc[kDimsPerLane] = {};
  for (int j = 0; j <= W; ++j) {  // warp-uniform: slot j is in or out for every lane
    float bias;
    if (j < W) {
      const std::int64_t frame = p.clock->slot_frame[j];
      if (frame < first) continue;
      const std::int64_t age = t - frame;
      bias = rel[age < 0 ? 0 : (age > W ? W : age)];
    } else {
      if (t - query_frame < W) continue;
      bias = rel[W];
    }
    float dot = 0.f;
#pragma unroll
    for (int u = 0; u < kDimsPerLane; ++u) {
      const int d = lane + u * kWarp;
      if (d < dh) dot += query[u] * to_float(keys[j * dh + d]);
    }
    const float score = warp_reduce(dot, Sum{}) * p.scale + bias;
    const float next = fmaxf(best, score), rescale = expf(best - next), weight = expf(score - next);
    total = total * rescale + weight;
#pragma unroll
    for (int u = 0; u < kDimsPerLane; ++u) {
      const int d = lane + u * kWarp;
      if (d < dh) acc[u] = acc[u] * rescale + weight * to_float(values[j * dh + d]);
    }
    best = next;
  }
  T* o = p.out + static_cast<std::size_t>(row) * width + h * dh;
#pragma unroll
  for (int u = 0; u < kDimsPerLane; ++u) {
    const int d = lane + u * kWarp;
    if (d < dh) store(o + d, acc[u] / total);
  }
}

// Rows of up to this many columns are kept in shared memory between the passes.
constexpr int kSoftmaxCachedCols = 8192;

// probs[r] = softmax(scale * scores[r]) as cpu::softmax_rows: the maximum,
// the sum of exp(scale (x - max)), then the normalized values; the row (then
// its exponentials) stays in shared memory when it has at most
// kSoftmaxCachedCols columns (dynamic shared memory holds it), else it is read
// again. Launch: one block of kThreads per row.
template <class T>
__global__ void __launch_bounds__(kThreads) softmax_rows_kernel(const float* scores, int cols, float scale, bool cached,
                                                                T* probs) {
  extern __shared__ float softmax_row[];
  __shared__ float scratch[kWarp];
  const float* in = scores + static_cast<std::size_t>(blockIdx.x) * cols;
  float best = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float x = in[j];
    if (cached) softmax_row[j] = x;
    best = fmaxf(best, x);
  }
  best = block_reduce(best, Max{}, -INFINITY, scratch);
  float total = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {  // each thread reads back only its own columns
    const float e = expf(((cached ? softmax_row[j] : in[j]) - best) * scale);
    if (cached) softmax_row[j] = e;
    total += e;
  }
  const float inv = 1.f / block_reduce(total, Sum{}, 0.f, scratch);
  T* out = probs + static_cast<std::size_t>(blockIdx.x) * cols;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    store(out + j, (cached ? softmax_row[j] : expf((in[j] - best) * scale)) * inv);
  }
}

// out[r][j] = qkv[r][2 width + j] + bias[2 width + j].
// Launch: grid-stride, one thread per value.
template <class T>
__global__ void __launch_bounds__(kThreads) take_values_kernel(const float* qkv, const float* bias, unsigned n_values,
                                                              unsigned width, T* out) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_values; i += gridDim.x * blockDim.x) {
    const unsigned j = 2 * width + i % width;
    store(out + i, qkv[i / width * 3 * width + j] + bias[j]);
  }
}

constexpr int kHeadOutputs = 4;  // the head's dx, dy, visibility and confidence logits

// Launch: one thread per row.
__global__ void apply_head_kernel(const float* acc, const float* bias, int S, float2* points) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= S) return;
  points[i].x += acc[i * kHeadOutputs + 0] + bias[0];
  points[i].y += acc[i * kHeadOutputs + 1] + bias[1];
}

__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

// Launch: one thread per row.
__global__ void finish_step_kernel(const float* acc, const float* bias, const int* slots, int S, bool query_step,
                                   const float2* points, float2* position, float2* previous, float4* estimate) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= S) return;
  const int s = slots[i];
  const float2 p = points[i];
  previous[s] = position[s];
  position[s] = p;
  const float vis = query_step ? 1.f : sigmoid(acc[i * kHeadOutputs + 2] + bias[2]);
  const float conf = query_step ? 1.f : sigmoid(acc[i * kHeadOutputs + 3] + bias[3]);
  estimate[s] = make_float4(p.x, p.y, vis, conf);
}

// ---- Launch shapes.

// Values as a 32-bit count; throws where a grid-stride loop could overflow it.
unsigned checked_count(std::size_t n) {
  if (n > std::numeric_limits<unsigned>::max() - static_cast<std::size_t>(kThreads) * kMaxBlocks) {
    throw std::length_error("track_ops: " + std::to_string(n) + " values are too many for 32-bit indices");
  }
  return static_cast<unsigned>(n);
}

// Blocks of kThreads for a grid-stride loop over n values.
int grid_for(std::size_t n) { return static_cast<int>(std::min((n + kThreads - 1) / kThreads, kMaxBlocks)); }

// Blocks of `per_block` for one thread (or warp) per item.
int blocks_of(int items, int per_block) { return (items + per_block - 1) / per_block; }

}  // namespace

void entry_points(const int* slots, int S, const float2* query, const float2* position, const float2* previous,
                  float velocity, bool query_step, float2* points, cudaStream_t stream) {
  if (S == 0) return;
  entry_points_kernel<<<blocks_of(S, kThreads), kThreads, 0, stream>>>(slots, S, query, position, previous, velocity,
                                                                       query_step, points);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void sample_descriptors(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S, int query_patch,
                        T* descs, std::size_t slot_stride, cudaStream_t stream) {
  if (S == 0) return;
  const SampleParams<T> p{pyramid, slots, points, S, query_patch, descs, slot_stride};
  const std::size_t values = static_cast<std::size_t>(S) * pyramid.levels * query_patch * query_patch * pyramid.channels;
  checked_count(values);
  if (vectorizable(pyramid, descs, slot_stride, 0)) {
    sample_descriptors_kernel<T, 8><<<grid_for(values / 8), kThreads, 0, stream>>>(p);
  } else {
    sample_descriptors_kernel<T, 1><<<grid_for(values), kThreads, 0, stream>>>(p);
  }
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void window_correlation(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S, int radius,
                        const T* descs, std::size_t slot_stride, std::size_t set_stride, int sets, int query_patch,
                        T* corr, cudaStream_t stream) {
  if (S == 0) return;
  const int query_cells = query_patch * query_patch;
  const float scale = 1.f / std::sqrt(static_cast<float>(pyramid.channels));
  const CorrelationParams<T> p{pyramid, slots, points, descs, slot_stride, set_stride, S, radius, sets, query_cells,
                               scale, corr};
  const int n_desc = sets * query_cells;
  const std::size_t shared = correlation_shared_bytes(pyramid.channels, n_desc);
  if (n_desc > kMaxCorrDescs || shared > kMaxStaticShared) {
    throw std::invalid_argument("window_correlation: " + std::to_string(n_desc) + " descriptors of " +
                                std::to_string(pyramid.channels) + " channels per level (at most " +
                                std::to_string(kMaxCorrDescs) + ", and at most 48 KB of shared memory per block)");
  }
  const unsigned blocks = blocks_of(S * pyramid.levels, kCorrWarps);
  if (vectorizable(pyramid, descs, slot_stride, sets > 1 ? set_stride : 0)) {
    window_correlation_kernel<T, 8><<<blocks, kCorrWarps * kWarp, shared, stream>>>(p);
  } else {
    window_correlation_kernel<T, 1><<<blocks, kCorrWarps * kWarp, shared, stream>>>(p);
  }
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void bias_activation(const float* acc, const float* bias, int rows, int n, bool gelu, T* out, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  const unsigned values = checked_count(static_cast<std::size_t>(rows) * n);
  bias_activation_kernel<T><<<grid_for(values), kThreads, 0, stream>>>(acc, bias, values, n, gelu, out);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void broadcast_row(const float* row, int rows, int n, float* x, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  const unsigned values = checked_count(static_cast<std::size_t>(rows) * n);
  broadcast_row_kernel<<<grid_for(values), kThreads, 0, stream>>>(row, values, n, x);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void layer_norm_rows(float* x, const float* pending_bias, int rows, int width, const float* gamma, const float* beta,
                     T* out, cudaStream_t stream) {
  if (rows == 0) return;
  layer_norm_kernel<T>
      <<<blocks_of(rows, kRowsPerBlock), kThreads, 0, stream>>>(x, pending_bias, rows, width, gamma, beta, out);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void token_inputs(const float* hidden, const float* bias, int corr_hidden, const float2* points, const float2* query,
                  const int* slots, int S, float disp_scale, int n_freq, bool query_step, T* token,
                  cudaStream_t stream) {
  if (S == 0) return;
  const unsigned values = checked_count(static_cast<std::size_t>(S) * (corr_hidden + 3 + 4 * n_freq));
  const TokenParams<T> p{hidden, bias, points, query, slots, corr_hidden, n_freq, values, disp_scale, query_step, token};
  token_inputs_kernel<T><<<grid_for(values), kThreads, 0, stream>>>(p);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void attend_cached(const float* qkv, const float* qkv_bias, const int* slots, int S, int heads, int head_dim,
                   int window, bool query_step, T* keys, T* values, std::size_t slot_stride, std::size_t layer_offset,
                   const float* rel_bias, const std::int64_t* query_frame, const FrameClock* clock, T* out,
                   cudaStream_t stream) {
  if (S == 0) return;
  if (head_dim > kMaxHeadDim || window < 1 || window > kMaxWindow) {
    throw std::invalid_argument("attend_cached: head_dim " + std::to_string(head_dim) + " (at most " +
                                std::to_string(kMaxHeadDim) + ") or window " + std::to_string(window) +
                                " (1.." + std::to_string(kMaxWindow) + ") out of range");
  }
  const float scale = 1.f / std::sqrt(static_cast<float>(head_dim));
  const AttendParams<T> p{qkv,  qkv_bias,    slots,        S,        heads,       head_dim, window, query_step, keys,
                          values, slot_stride, layer_offset, rel_bias, query_frame, clock,  scale,  out};
  attend_cached_kernel<T><<<blocks_of(S * heads, kAttendWarps), kAttendWarps * kWarp, 0, stream>>>(p);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void softmax_rows(const float* scores, int rows, int cols, float scale, T* probs, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const bool cached = cols <= kSoftmaxCachedCols;
  const std::size_t shared = cached ? static_cast<std::size_t>(cols) * sizeof(float) : 0;
  softmax_rows_kernel<T><<<rows, kThreads, shared, stream>>>(scores, cols, scale, cached, probs);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void take_values(const float* qkv, const float* bias, int rows, int width, T* out, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  checked_count(static_cast<std::size_t>(rows) * 3 * width);  // the kernel's indices into qkv
  const unsigned values = static_cast<unsigned>(rows) * width;
  take_values_kernel<T><<<grid_for(values), kThreads, 0, stream>>>(qkv, bias, values, width, out);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void apply_head(const float* acc, const float* bias, int S, bool query_step, float2* points, cudaStream_t stream) {
  if (S == 0 || query_step) return;  // the query point is given, not estimated
  apply_head_kernel<<<blocks_of(S, kThreads), kThreads, 0, stream>>>(acc, bias, S, points);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void finish_step(const float* acc, const float* bias, const int* slots, int S, bool query_step, const float2* points,
                 float2* position, float2* previous, float4* estimate, cudaStream_t stream) {
  if (S == 0) return;
  finish_step_kernel<<<blocks_of(S, kThreads), kThreads, 0, stream>>>(acc, bias, slots, S, query_step, points,
                                                                      position, previous, estimate);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

// The precisions, instantiated here once.
#define EDGETAP_TRACK_OPS_INSTANTIATE(T)                                                                             \
  template void sample_descriptors<T>(const PyramidView<T>&, const int*, const float2*, int, int, T*, std::size_t,   \
                                      cudaStream_t);                                                                 \
  template void window_correlation<T>(const PyramidView<T>&, const int*, const float2*, int, int, const T*,          \
                                      std::size_t, std::size_t, int, int, T*, cudaStream_t);                         \
  template void bias_activation<T>(const float*, const float*, int, int, bool, T*, cudaStream_t);                    \
  template void layer_norm_rows<T>(float*, const float*, int, int, const float*, const float*, T*, cudaStream_t);    \
  template void token_inputs<T>(const float*, const float*, int, const float2*, const float2*, const int*, int,      \
                                float, int, bool, T*, cudaStream_t);                                                 \
  template void attend_cached<T>(const float*, const float*, const int*, int, int, int, int, bool, T*, T*,          \
                                 std::size_t, std::size_t, const float*, const std::int64_t*, const FrameClock*, T*, \
                                 cudaStream_t);                                                                      \
  template void softmax_rows<T>(const float*, int, int, float, T*, cudaStream_t);                                    \
  template void take_values<T>(const float*, const float*, int, int, T*, cudaStream_t);

EDGETAP_TRACK_OPS_INSTANTIATE(float)
EDGETAP_TRACK_OPS_INSTANTIATE(__half)
#undef EDGETAP_TRACK_OPS_INSTANTIATE

}  // namespace edgetap::kernels::cuda
