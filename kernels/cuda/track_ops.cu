// The tracker's CUDA kernels (declared in track_ops.hpp) but the pyramid
// sampling (sampling.cu), each the twin of a CPU reference (kernels/cpu/,
// engine::StreamingSession::step). Storage is T
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
#include <type_traits>

#include "attend_cached.cuh"
#include "device_common.cuh"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

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

// The same for rows of a width the registers hold (kChunks x 128 values, the
// widths layer_norm_in_registers takes): each lane loads its columns as
// float4, 4 l + 128 c for chunk c, with the pending bias, gamma and beta, in
// one go, so a row costs one round trip to memory rather than one per column
// pass; the sums are the same terms in another order.
__device__ __forceinline__ float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }

__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ __forceinline__ void store4(__half* p, float4 v) {
  uint2 raw;
  reinterpret_cast<__half2*>(&raw)[0] = __floats2half2_rn(v.x, v.y);
  reinterpret_cast<__half2*>(&raw)[1] = __floats2half2_rn(v.z, v.w);
  *reinterpret_cast<uint2*>(p) = raw;
}

constexpr int kLayerNormPack = 4;                     // values a lane loads at once (a float4)
constexpr int kLayerNormChunk = kWarp * kLayerNormPack;  // a row's values one warp load covers
constexpr int kLayerNormMaxChunks = 8;               // widths 128, 256, 512 and 1,024 in registers

template <class T, int kChunks>
__global__ void __launch_bounds__(kThreads) layer_norm_registers_kernel(float* in, const float* pending_bias, int rows,
                                                                       const float* gamma, const float* beta, T* out) {
  constexpr int kWidth = kChunks * kLayerNormChunk;
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  float4* x = reinterpret_cast<float4*>(in + static_cast<std::size_t>(row) * kWidth);
  float4 v[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) v[c] = x[c * kWarp + lane];
  if (pending_bias != nullptr) {
    const float4* b = reinterpret_cast<const float4*>(pending_bias);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      v[c] = v[c] + __ldg(b + c * kWarp + lane);
      x[c * kWarp + lane] = v[c];
    }
  }
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) sum += v[c].x + v[c].y + v[c].z + v[c].w;
  const float mean = warp_reduce(sum, Sum{}) / static_cast<float>(kWidth);
  float squares = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const float dx = v[c].x - mean, dy = v[c].y - mean, dz = v[c].z - mean, dw = v[c].w - mean;
    squares += dx * dx + dy * dy + dz * dz + dw * dw;
  }
  const float inv = 1.f / sqrtf(warp_reduce(squares, Sum{}) / static_cast<float>(kWidth) + 1e-5f);
  const float4* g = reinterpret_cast<const float4*>(gamma);
  const float4* be = reinterpret_cast<const float4*>(beta);
  T* y = out + static_cast<std::size_t>(row) * kWidth;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const float4 gc = __ldg(g + c * kWarp + lane), bc = __ldg(be + c * kWarp + lane);
    const float4 n = make_float4((v[c].x - mean) * inv * gc.x + bc.x, (v[c].y - mean) * inv * gc.y + bc.y,
                                 (v[c].z - mean) * inv * gc.z + bc.z, (v[c].w - mean) * inv * gc.w + bc.w);
    store4(y + (c * kWarp + lane) * kLayerNormPack, n);
  }
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

// Launch: one warp per (row, head), kAttendWarps warps per block.
template <class T>
__global__ void __launch_bounds__(kAttendWarps * kWarp) attend_cached_kernel(AttendParams<T> p) {
  attend_cached_pair(p, blockIdx.x * kAttendWarps + threadIdx.x / kWarp);
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

// Whether layer_norm_rows takes the registers' kernel: a width of whole chunks
// that the registers hold, every pointer aligned for its vector accesses.
bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

template <class T>
bool layer_norm_in_registers(int width, const float* x, const float* pending_bias, const float* gamma,
                             const float* beta, const T* out) {
  constexpr std::size_t kFloat4 = sizeof(float4);
  const int chunks = width / kLayerNormChunk;
  const bool built = chunks == 1 || chunks == 2 || chunks == 4 || chunks == kLayerNormMaxChunks;
  return width % kLayerNormChunk == 0 && built && aligned(x, kFloat4) &&
         (pending_bias == nullptr || aligned(pending_bias, kFloat4)) && aligned(gamma, kFloat4) &&
         aligned(beta, kFloat4) && aligned(out, kLayerNormPack * sizeof(T));
}

// f(std::integral_constant<int, chunks>) for the chunk counts the registers' kernel is built for.
template <class F>
void with_chunks(int chunks, F&& f) {
  switch (chunks) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    default: f(std::integral_constant<int, kLayerNormMaxChunks>{}); break;
  }
}

}  // namespace

void entry_points(const int* slots, int S, const float2* query, const float2* position, const float2* previous,
                  float velocity, bool query_step, float2* points, cudaStream_t stream) {
  if (S == 0) return;
  entry_points_kernel<<<blocks_of(S, kThreads), kThreads, 0, stream>>>(slots, S, query, position, previous, velocity,
                                                                       query_step, points);
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
  const int blocks = blocks_of(rows, kRowsPerBlock);
  if (layer_norm_in_registers(width, x, pending_bias, gamma, beta, out)) {
    with_chunks(width / kLayerNormChunk, [&](auto chunks) {
      layer_norm_registers_kernel<T, decltype(chunks)::value>
          <<<blocks, kThreads, 0, stream>>>(x, pending_bias, rows, gamma, beta, out);
    });
  } else {
    layer_norm_kernel<T><<<blocks, kThreads, 0, stream>>>(x, pending_bias, rows, width, gamma, beta, out);
  }
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
