// The tracker's CUDA kernels (everything after the encoder but the matrix
// products, which go through cuBLAS). Each is the GPU twin of a CPU reference
// in edgetap/kernels/cpu.hpp or of a step of engine::StreamingSession, and is
// checked against it (engine/cuda/tests/). T is the storage precision, float or
// __half; arithmetic and accumulation are float.
//
// Conventions shared by every kernel here:
//   - "rows" are the S tracks stepped this frame, in the order of `slots`
//     (slots[i] is row i's track slot in the session's per-slot arrays);
//   - per-slot arrays are indexed by slot and have a fixed stride, so a track
//     keeps its slot from its query frame to its removal;
//   - matrix-product outputs are float [rows][n] without their bias: the
//     kernel that reads them adds the bias. The residual stream x, which the
//     matrix products accumulate into, thus carries a "pending" bias after
//     each of them; the next layer_norm_rows adds it and writes x back;
//   - values that change every frame (the frame index, which frame each window
//     slot holds) are read from device memory (`FrameClock`), never passed as
//     arguments, so a captured CUDA graph replays correctly on later frames.
// Every function launches on `stream` and checks the launch; none synchronizes.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "edgetap/kernels/correlation_read.hpp"

namespace edgetap::kernels::cuda {

inline constexpr int kMaxLevels = 5;
inline constexpr int kMaxWindow = 32;

// A feature pyramid on the device: per level an HWC map of `channels` values.
template <class T>
struct PyramidView {
  const T* level[kMaxLevels] = {};
  int height[kMaxLevels] = {};
  int width[kMaxLevels] = {};
  float stride[kMaxLevels] = {};  // image pixels per cell: a point p maps to p / stride
  int levels = 0;
  int channels = 0;
};

// Per-frame scalars, in device memory, written by the host before each step.
struct FrameClock {
  FrameClock() {
    for (std::int64_t& f : slot_frame) f = -1;
  }
  std::int64_t t = -1;                      // the frame being stepped
  std::int64_t slot_frame[kMaxWindow];      // which frame each cache slot holds, -1 = none yet
  int batch_frame = 0;                      // the frame's index in the encoder's batch, when it comes from one
};

// Where each row starts this frame: the query point on its query step, else its
// last output plus `velocity` times that output's last displacement.
void entry_points(const int* slots, int S, const float2* query, const float2* position, const float2* previous,
                  float velocity, bool query_step, float2* points, cudaStream_t stream);

// Writes, for every row, [levels][query_patch^2][channels] descriptors sampled
// bilinearly (zero outside the map) around points[i] / stride + (dx, dy),
// (dx, dy) over the query_patch^2 neighbourhood in level cells, row-major, dy
// outer, to descs + slots[i] * slot_stride (cpu::bilinear_sample_hwc).
template <class T>
void sample_descriptors(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S, int query_patch,
                        T* descs, std::size_t slot_stride, cudaStream_t stream);

// The local correlation of every row, read by read: for each of the n_reads
// reads (a descriptor set at descs + slots[i] * slot_stride + set *
// set_stride, its descriptors of one level, the window of one level),
// descriptor and window cell, dot(descriptor, bilinear(window level, p /
// stride + (dx, dy))) / sqrt(channels), (dx, dy) in [-radius, radius]^2
// row-major. Writes corr [S][n_reads][query_patch^2][(2 radius + 1)^2]
// (cpu::window_correlation_hwc per read). Every level's window needs a read;
// a window is sampled once per row and reused by all its reads' descriptors
// (at most 4 reads of a window, 36 descriptors). std::invalid_argument for
// reads it cannot run.
template <class T>
void window_correlation(const PyramidView<T>& pyramid, const int* slots, const float2* points, int S, int radius,
                        const T* descs, std::size_t slot_stride, std::size_t set_stride,
                        const CorrelationRead* reads, int n_reads, int query_patch, T* corr, cudaStream_t stream);

// window_correlation in FP16 with its products on the tensor cores (mma.sync
// m16n8k8, sm_75 and later): each window cell's channels sampled in float and
// rounded to half before the products, which accumulate in float. Where the
// shapes do not allow it (channels not a multiple of 64, more than 32
// descriptors or 64 cells per window, no 16-byte access), window_correlation.
void window_correlation_tensor_cores(const PyramidView<__half>& pyramid, const int* slots, const float2* points, int S,
                                     int radius, const __half* descs, std::size_t slot_stride, std::size_t set_stride,
                                     const CorrelationRead* reads, int n_reads, int query_patch, __half* corr,
                                     cudaStream_t stream);

// out[r][j] = act(acc[r][j] + bias[j]), act = exact GELU or identity.
template <class T>
void bias_activation(const float* acc, const float* bias, int rows, int n, bool gelu, T* out, cudaStream_t stream);

// x[r][:] = row[:] for every r (the tracker's initial hidden state h0).
void broadcast_row(const float* row, int rows, int n, float* x, cudaStream_t stream);

// LayerNorm of each row of x over `width` (eps 1e-5, biased variance) into
// out. With a pending_bias ([width], the bias of the matrix product last
// accumulated into x), first x[r][j] += pending_bias[j], written back to x,
// and the sum normalized; with nullptr, x is only read.
template <class T>
void layer_norm_rows(float* x, const float* pending_bias, int rows, int width, const float* gamma, const float* beta,
                     T* out, cudaStream_t stream);

// The token input of every row: [hidden + bias (corr_hidden values),
// Fourier((points[i] - query[slots[i]]) / disp_scale) (2 + 4 n_freq values,
// engine::StreamingSession's order), anchor flag (1 on the query step)].
template <class T>
void token_inputs(const float* hidden, const float* bias, int corr_hidden, const float2* points, const float2* query,
                  const int* slots, int S, float disp_scale, int n_freq, bool query_step, T* token,
                  cudaStream_t stream);

// One transformer block's causal attention over each track's cached window.
// qkv: [S][3 width] float without its bias (q, k, v blocks, heads as
// contiguous head_dim columns); q, k and v are read as qkv[i][j] +
// qkv_bias[j] (qkv_bias [3 width], required). For row i the cache of this
// iteration and block is keys/values + slots[i] * slot_stride + layer_offset,
// laid out [heads][window + 1][head_dim]. The kernel first stores the row's k
// and v (bias added) at window slot clock->t % window (and, on the query
// step, at slot `window`, the anchor), then attends as cpu::attend_cached
// with scale 1/sqrt(head_dim) and the additive bias of
// engine::StreamingSession::attention_bias: slot j is in when
// clock->slot_frame[j] >= max(0, query_frame[slots[i]]), with
// rel_bias[h][clamp(t - slot_frame[j], 0, window)]; the anchor is in once
// t - query_frame >= window, with rel_bias[h][window]. Writes out [S][width].
template <class T>
void attend_cached(const float* qkv, const float* qkv_bias, const int* slots, int S, int heads, int head_dim,
                   int window, bool query_step, T* keys, T* values, std::size_t slot_stride, std::size_t layer_offset,
                   const float* rel_bias, const std::int64_t* query_frame, const FrameClock* clock, T* out,
                   cudaStream_t stream);

// probs[r][c] = softmax_c(scale * scores[r][c]) (cpu::softmax_rows), written as T.
template <class T>
void softmax_rows(const float* scores, int rows, int cols, float scale, T* probs, cudaStream_t stream);

// The cross-track layer on the query step, where each track attends only to
// itself: out[r][j] = qkv[r][2 width + j] + bias[2 width + j], the v part of
// qkv (without its bias) plus the v part of bias ([3 width]).
template <class T>
void take_values(const float* qkv, const float* bias, int rows, int width, T* out, cudaStream_t stream);

// points[i] += (acc[i][0] + bias[0], acc[i][1] + bias[1]) (not on the query step,
// where the point is given).
void apply_head(const float* acc, const float* bias, int S, bool query_step, float2* points, cudaStream_t stream);

// The end of a step: previous[s] = position[s]; position[s] = points[i];
// estimate[s] = (x, y, sigmoid(vis logit), sigmoid(conf logit)), both 1 on the
// query step; the logits are acc[i][2..3] + bias[2..3] of the last iteration.
void finish_step(const float* acc, const float* bias, const int* slots, int S, bool query_step, const float2* points,
                 float2* position, float2* previous, float4* estimate, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
