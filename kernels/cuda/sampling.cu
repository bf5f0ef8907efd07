// Sampling the feature pyramid for the tracker (declared in track_ops.hpp):
// the query descriptors and the local window correlation, each the twin of
// its CPU reference (cpu::bilinear_sample_hwc, cpu::window_correlation_hwc).
// Storage is T (float or __half), arithmetic float; nothing allocates or
// synchronizes.
#include <cmath>
#include <string>

#include "device_common.cuh"
#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

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

}  // namespace

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

#define EDGETAP_SAMPLING_INSTANTIATE(T)                                                                             \
  template void sample_descriptors<T>(const PyramidView<T>&, const int*, const float2*, int, int, T*, std::size_t,  \
                                      cudaStream_t);                                                                \
  template void window_correlation<T>(const PyramidView<T>&, const int*, const float2*, int, int, const T*,         \
                                      std::size_t, std::size_t, int, int, T*, cudaStream_t);

EDGETAP_SAMPLING_INSTANTIATE(float)
EDGETAP_SAMPLING_INSTANTIATE(__half)
#undef EDGETAP_SAMPLING_INSTANTIATE

}  // namespace edgetap::kernels::cuda
