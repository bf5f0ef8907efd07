// Sampling the feature pyramid for the tracker (declared in track_ops.hpp):
// the query descriptors and the local window correlation, each the twin of
// its CPU reference (cpu::bilinear_sample_hwc, cpu::window_correlation_hwc).
// Storage is T (float or __half), arithmetic float; nothing allocates or
// synchronizes.
#include <algorithm>
#include <cmath>
#include <string>

#include "device_common.cuh"
#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"
#include "mma.cuh"

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

constexpr int kMaxWindowReads = 4;  // reads of one level's window: 2 sets, and the 2 cross-scale ones

// The reads of one window level: whose descriptors, and where in the row's output each goes.
struct WindowReads {
  int count;
  int set[kMaxWindowReads], descriptor_level[kMaxWindowReads], read[kMaxWindowReads];
};

template <class T>
struct CorrelationParams {
  PyramidView<T> pyramid;
  const int* slots;
  const float2* points;
  const T* descs;
  std::size_t slot_stride, set_stride;
  int rows, radius, query_cells, reads;  // reads: correlation reads per row
  int warp_descs;  // descriptors of the most-read window: each warp's share of shared memory
  float scale;  // 1 / sqrt(channels)
  WindowReads window_reads[kMaxLevels];
  T* corr;
};

constexpr int kCorrWarps = 4;       // warps per block, one (row, window level) each
constexpr int kMaxCorrDescs = kMaxWindowReads * 9;  // descriptors per window: its reads x a 3x3 query patch
constexpr int kFewCorrDescs = 18;   // up to 2 reads of a 3x3 patch: a kernel with half the registers
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

// The local correlation of one row at one window level, for every read of
// that level's window (p.window_reads[level]: the sets' own-level descriptors
// and, with cross-scale reads, the neighbouring levels' query descriptors):
// corr[row][read][j][cell] = scale * dot(desc[set][descriptor level][j],
// bilinear(window level, point / stride + cell offset)).
// Launch: one warp per (row, window level), kCorrWarps warps per block,
// dynamic shared memory correlation_shared_bytes: each warp's descriptors as
// float. The warp loads its descriptors once; each lane then takes window
// cells (cells lane, lane + 32, ...), samples each cell's V channels at a time
// (4 taps) and adds them into all the descriptors' sums held in registers
// (MaxDescs of them), so a window is sampled once for every read of it and no
// block-wide barrier is needed.
// Per row, with D channels, L levels, n descriptors read in all (reads x
// query cells), k = 2r + 1 and b = sizeof(T) bytes:
//   DRAM at least: descriptors n D b + output n k^2 b + 12 (point, slot);
//   the map cells touched, L (k+1)^2 D b, come from L2 where tracks are close
//   (every cell is read by up to 4 taps, the repeats hit L1).
//   FLOPs: sampling 8 L k^2 D, dots 2 n k^2 D.
//   D = 64, L = 4, query_patch 3, 4 reads, r = 3, FP16 (edgetap-small): 4.6 KB
//   descriptors + 3.5 KB output from DRAM, 25.6 KB of map cells; 0.10 + 0.23 MFLOP.
//   With the 6 cross-scale reads (10 reads): 11.5 + 8.8 KB; 0.10 + 0.56 MFLOP.
template <class T, int V, int MaxDescs>
__global__ void __launch_bounds__(kCorrWarps * kWarp) window_correlation_kernel(CorrelationParams<T> p) {
  extern __shared__ float4 correlation_shared[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, levels = p.pyramid.levels;
  const int task = blockIdx.x * kCorrWarps + warp;
  if (task >= p.rows * levels) return;  // the whole warp
  const int row = task / levels, level = task % levels;
  const WindowReads& wr = p.window_reads[level];
  const int C = p.pyramid.channels, k = 2 * p.radius + 1, cells = k * k, qc = p.query_cells, n_desc = wr.count * qc;
  // Windows differ in their reads, so warps of a block (different levels) hold different counts.
  float* descs = reinterpret_cast<float*>(correlation_shared) + static_cast<std::size_t>(warp) * p.warp_descs * C;
  const T* slot_descs = p.descs + p.slots[row] * p.slot_stride;
  for (int i = lane * V; i < n_desc * C; i += kWarp * V) {
    const int d = i / C, c = i % C, r = d / qc;
    float v[V];
    load_vec<V>(slot_descs + wr.set[r] * p.set_stride +
                    static_cast<std::size_t>(wr.descriptor_level[r] * qc + d % qc) * C + c,
                v);
    store_shared<V>(descs + i, v);
  }
  __syncwarp();

  const LevelMap<T> map = level_map(p.pyramid, level);
  const float2 pt = p.points[row];
  const BilinearCell centre = locate(pt.x / map.stride, pt.y / map.stride);
  T* out = p.corr + static_cast<std::size_t>(row) * p.reads * qc * cells;
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
    float acc[kCellsPerLane][MaxDescs] = {};
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
      for (int d = 0; d < MaxDescs; ++d) {
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
      for (int d = 0; d < MaxDescs; ++d) {
        if (d >= n_desc) break;
        store(out + (wr.read[d / qc] * qc + d % qc) * cells + cell, acc[e][d] * p.scale);
      }
    }
  }
}

// The kernel for `V`-channel loads, its descriptor registers sized for `n_desc`.
template <class T, int V>
void launch_window_correlation(const CorrelationParams<T>& p, int n_desc, unsigned blocks, std::size_t shared,
                               cudaStream_t stream) {
  if (n_desc <= kFewCorrDescs) {
    window_correlation_kernel<T, V, kFewCorrDescs><<<blocks, kCorrWarps * kWarp, shared, stream>>>(p);
  } else {
    window_correlation_kernel<T, V, kMaxCorrDescs><<<blocks, kCorrWarps * kWarp, shared, stream>>>(p);
  }
}

constexpr int kMmaDescTiles = 2;       // a window's descriptors as A tiles of 16 rows: up to 32
constexpr int kMmaWarpDescTiles = 1;   // the A tiles of one warp (1 of 2: 36.8 against 41.3 µs a launch, H100)
constexpr int kMmaPatch = kMmaK;       // the map cells under a window: up to 8 x 8 (radius 3)
constexpr int kMmaLaneChannels = 16;   // channels one lane reads per chunk: two 16-byte loads
constexpr int kMmaSteps = kMmaLaneChannels / 2;  // k steps per chunk: each lane's channel pairs
constexpr int kMmaChunk = 4 * kMmaLaneChannels;  // channels per chunk: the 4 lanes of a fragment row
constexpr int kMmaCorrBlocksPerSm = 4;  // registers capped for 16 warps an SM (120 a thread)

// window_correlation_kernel on the tensor cores, FP16, by linearity: every cell
// of a window is the same bilinear blend (weights from the point's fraction) of
// 4 neighbouring map cells, so a descriptor's dot with a sampled cell is the same
// blend of its dots with the map cells. The warp takes the (k + 1) x (k + 1) map
// cells under the window as they are (no sampling), their dots with the
// descriptors on the tensor cores (mma.sync m16n8k8: A the descriptors, B a patch
// row of 8 cells, one n tile per patch row), and blends the dots in registers:
// across a row with the next lane's column, down with the next tile. A map cell
// outside the map is zero, so it adds nothing, as in cpu::bilinear_sample_hwc.
// A dot product does not depend on its channels' order, so each k step takes
// its channels where loads are widest: in a chunk of 64 channels, lane 4g + t
// reads channels 16t .. 16t + 15 (two 16-byte loads; the 4 lanes of a row read a
// cell's 128 bytes whole) and gives step s's pair (k rows 2t, 2t + 1) channels
// 16t + 2s and 16t + 2s + 1, for the descriptors as for the cells.
// Launch: one warp per (row, window level, kMmaWarpDescTiles A tiles),
// kCorrWarps warps per block, no shared memory.
// Per row and window level at edgetap-large's shapes (18-27 descriptors, radius
// 3, 64 channels): 2 x 8 x 8 = 128 mma; per lane 8 16-byte loads of descriptors
// and 16 of map cells (the window's 64 cells read once, 8 KB), where sampling
// each of the 49 cells read 4 x 49 cells from L2.
__global__ void __launch_bounds__(kCorrWarps * kWarp, kMmaCorrBlocksPerSm)
    window_correlation_mma_kernel(CorrelationParams<__half> p) {
  constexpr int groups = kMmaDescTiles / kMmaWarpDescTiles;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, levels = p.pyramid.levels;
  const int task = blockIdx.x * kCorrWarps + warp;
  if (task >= p.rows * levels * groups) return;  // the whole warp
  const int row = task / (levels * groups), level = task / groups % levels;
  const int first_desc = task % groups * kMmaWarpDescTiles * kMmaRows;
  const int g = lane / 4, t = lane % 4;
  const WindowReads& wr = p.window_reads[level];
  const int C = p.pyramid.channels, k = 2 * p.radius + 1, cells = k * k, qc = p.query_cells, n_desc = wr.count * qc;
  if (first_desc >= n_desc) return;  // the whole warp: this window has fewer descriptors
  const __half* slot_descs = p.descs + p.slots[row] * p.slot_stride;
  const __half* a_rows[kMmaWarpDescTiles][2];  // this lane's descriptors, 16 m + g (+ 8); nullptr past the last
#pragma unroll
  for (int m = 0; m < kMmaWarpDescTiles; ++m) {
#pragma unroll
    for (int upper = 0; upper < 2; ++upper) {
      const int d = first_desc + m * kMmaRows + g + 8 * upper, r = d / qc;
      a_rows[m][upper] = d < n_desc ? slot_descs + wr.set[r] * p.set_stride +
                                          static_cast<std::size_t>(wr.descriptor_level[r] * qc + d % qc) * C
                                    : nullptr;
    }
  }
  const LevelMap<__half> map = level_map(p.pyramid, level);
  const float2 pt = p.points[row];
  const BilinearCell centre = locate(pt.x / map.stride, pt.y / map.stride);
  // This lane's column of the patch (cell g of every patch row), or none.
  const int x = centre.x0 - p.radius + g;
  const bool column_in_map = g <= k && x >= 0 && x < map.width;

  float acc[kMmaWarpDescTiles][kMmaPatch][4] = {};
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int chunk = 0; chunk < C; chunk += kMmaChunk) {
    const int c0 = chunk + kMmaLaneChannels * t;
    uint4 a[kMmaWarpDescTiles][2][2];  // [tile][row g, g + 8][steps 0-3, 4-7]: half pairs
#pragma unroll
    for (int m = 0; m < kMmaWarpDescTiles; ++m) {
#pragma unroll
      for (int upper = 0; upper < 2; ++upper) {
        const __half* at = a_rows[m][upper];
        a[m][upper][0] = at != nullptr ? ldg16(at + c0) : zero;
        a[m][upper][1] = at != nullptr ? ldg16(at + c0 + 8) : zero;
      }
    }
#pragma unroll
    for (int i = 0; i < kMmaPatch; ++i) {
      if (i > k) break;  // the same for every lane
      const int y = centre.y0 - p.radius + i;
      uint4 b[2] = {zero, zero};
      if (column_in_map && y >= 0 && y < map.height) {
        const __half* cell = map.data + (static_cast<std::size_t>(y) * map.width + x) * C + c0;
        b[0] = ldg16(cell);
        b[1] = ldg16(cell + 8);
      }
#pragma unroll
      for (int s = 0; s < kMmaSteps; ++s) {
#pragma unroll
        for (int m = 0; m < kMmaWarpDescTiles; ++m) {
          const unsigned frag[2] = {word(a[m][0][s / 4], s % 4), word(a[m][1][s / 4], s % 4)};
          mma_16x8x8(acc[m][i], frag, word(b[s / 4], s % 4));
        }
      }
    }
  }

  // The blend: across (this lane's columns 2t, 2t + 1 and the next lane's 2t + 2), then down.
  const float ax = centre.ax, ay = centre.ay;
#pragma unroll
  for (int m = 0; m < kMmaWarpDescTiles; ++m) {
#pragma unroll
    for (int i = 0; i < kMmaPatch; ++i) {
#pragma unroll
      for (int upper = 0; upper < 2; ++upper) {
        float& left = acc[m][i][2 * upper];
        float& right = acc[m][i][2 * upper + 1];
        const float next = __shfl_down_sync(0xffffffffu, left, 1);  // column 2t + 2 (unused past the patch)
        const float blended_left = (1 - ax) * left + ax * right;
        right = (1 - ax) * right + ax * next;
        left = blended_left;
      }
    }
#pragma unroll
    for (int i = 0; i + 1 < kMmaPatch; ++i) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][i][e] = (1 - ay) * acc[m][i][e] + ay * acc[m][i + 1][e];
    }
  }

  __half* out = p.corr + static_cast<std::size_t>(row) * p.reads * qc * cells;
#pragma unroll
  for (int m = 0; m < kMmaWarpDescTiles; ++m) {
#pragma unroll
    for (int i = 0; i + 1 < kMmaPatch; ++i) {
      if (i >= k) break;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int d = first_desc + m * kMmaRows + g + 8 * (e / 2), column = 2 * t + (e & 1);
        if (d < n_desc && column < k) {
          store(out + (wr.read[d / qc] * qc + d % qc) * cells + i * k + column, acc[m][i][e] * p.scale);
        }
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

// The reads grouped by window level and checked, as both correlation kernels take
// them; p.warp_descs: the most descriptors one warp holds.
template <class T>
CorrelationParams<T> correlation_params(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S,
                                        int radius, const T* descs, std::size_t slot_stride, std::size_t set_stride,
                                        const CorrelationRead* reads, int n_reads, int query_patch, T* corr,
                                        int& max_sets) {
  const int query_cells = query_patch * query_patch;
  const float scale = 1.f / std::sqrt(static_cast<float>(pyramid.channels));
  CorrelationParams<T> p{pyramid, slots, points, descs, slot_stride, set_stride, S, radius, query_cells,
                         n_reads, 0, scale, {}, corr};
  // Each window level's reads, in the order of `reads` (the output's).
  max_sets = 1;
  for (int r = 0; r < n_reads; ++r) {
    const CorrelationRead& read = reads[r];
    if (read.window_level < 0 || read.window_level >= pyramid.levels || read.descriptor_level < 0 ||
        read.descriptor_level >= pyramid.levels || read.set < 0) {
      throw std::invalid_argument("window_correlation: read " + std::to_string(r) + " names a level outside the " +
                                  std::to_string(pyramid.levels) + "-level pyramid");
    }
    WindowReads& wr = p.window_reads[read.window_level];
    if (wr.count == kMaxWindowReads) {
      throw std::invalid_argument("window_correlation: more than " + std::to_string(kMaxWindowReads) +
                                  " reads of level " + std::to_string(read.window_level) + "'s window");
    }
    wr.set[wr.count] = read.set;
    wr.descriptor_level[wr.count] = read.descriptor_level;
    wr.read[wr.count] = r;
    ++wr.count;
    max_sets = std::max(max_sets, read.set + 1);
  }
  for (int l = 0; l < pyramid.levels; ++l) {
    if (p.window_reads[l].count == 0) {
      throw std::invalid_argument("window_correlation: no read of level " + std::to_string(l) + "'s window");
    }
    p.warp_descs = std::max(p.warp_descs, p.window_reads[l].count * query_cells);
  }
  return p;
}

template <class T>
void window_correlation(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S, int radius,
                        const T* descs, std::size_t slot_stride, std::size_t set_stride,
                        const CorrelationRead* reads, int n_reads, int query_patch, T* corr, cudaStream_t stream) {
  if (S == 0) return;
  int max_sets = 1;
  const CorrelationParams<T> p = correlation_params(pyramid, slots, points, S, radius, descs, slot_stride, set_stride,
                                                    reads, n_reads, query_patch, corr, max_sets);
  const int n_desc = p.warp_descs;
  const std::size_t shared = correlation_shared_bytes(pyramid.channels, n_desc);
  if (n_desc > kMaxCorrDescs || shared > kMaxStaticShared) {
    throw std::invalid_argument("window_correlation: " + std::to_string(n_desc) + " descriptors of " +
                                std::to_string(pyramid.channels) + " channels per window (at most " +
                                std::to_string(kMaxCorrDescs) + ", and at most 48 KB of shared memory per block)");
  }
  const unsigned blocks = blocks_of(S * pyramid.levels, kCorrWarps);
  if (vectorizable(pyramid, descs, slot_stride, max_sets > 1 ? set_stride : 0)) {
    launch_window_correlation<T, 8>(p, n_desc, blocks, shared, stream);
  } else {
    launch_window_correlation<T, 1>(p, n_desc, blocks, shared, stream);
  }
  EDGETAP_CUDA_LAUNCH_CHECK();
}

void window_correlation_tensor_cores(const PyramidView<__half>& pyramid, const int* slots, const float2* points, int S,
                                     int radius, const __half* descs, std::size_t slot_stride, std::size_t set_stride,
                                     const CorrelationRead* reads, int n_reads, int query_patch, __half* corr,
                                     cudaStream_t stream) {
  if (S == 0) return;
  int max_sets = 1;
  const CorrelationParams<__half> p = correlation_params(pyramid, slots, points, S, radius, descs, slot_stride,
                                                         set_stride, reads, n_reads, query_patch, corr, max_sets);
  const bool fits = pyramid.channels % kMmaChunk == 0 && p.warp_descs <= kMmaDescTiles * kMmaRows &&
                    2 * radius + 2 <= kMmaPatch && vectorizable(pyramid, descs, slot_stride, max_sets > 1 ? set_stride : 0);
  if (!fits) {
    window_correlation(pyramid, slots, points, S, radius, descs, slot_stride, set_stride, reads, n_reads, query_patch,
                       corr, stream);
    return;
  }
  constexpr int groups = kMmaDescTiles / kMmaWarpDescTiles;
  window_correlation_mma_kernel<<<blocks_of(S * pyramid.levels * groups, kCorrWarps), kCorrWarps * kWarp, 0, stream>>>(p);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

#define EDGETAP_SAMPLING_INSTANTIATE(T)                                                                             \
  template void sample_descriptors<T>(const PyramidView<T>&, const int*, const float2*, int, int, T*, std::size_t,  \
                                      cudaStream_t);                                                                \
  template void window_correlation<T>(const PyramidView<T>&, const int*, const float2*, int, int, const T*,         \
                                      std::size_t, std::size_t, const CorrelationRead*, int, int, T*,          \
                                      cudaStream_t);

EDGETAP_SAMPLING_INSTANTIATE(float)
EDGETAP_SAMPLING_INSTANTIATE(__half)
#undef EDGETAP_SAMPLING_INSTANTIATE

}  // namespace edgetap::kernels::cuda
