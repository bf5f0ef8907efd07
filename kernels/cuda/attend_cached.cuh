// One warp's (row, head) of the attention over each track's window cache
// (attend_cached in track_ops.hpp): shared by attend_cached_kernel
// (track_ops.cu) and the tracker program's phases (tracker_program.cu).
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "device_common.cuh"
#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::kernels::cuda::detail {

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
// The calling warp takes pair `pair` (row pair / heads, head pair % heads).
template <class T>
__device__ void attend_cached_pair(const AttendParams<T>& p, int pair) {
  const int lane = threadIdx.x % kWarp;
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

}  // namespace edgetap::kernels::cuda::detail
