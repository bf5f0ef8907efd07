// A run of the tracker's layers between two correlations (its blocks'
// LayerNorms, products and window attention, the cross-track attention, the
// head's product) as one persistent kernel: every phase the kernel each layer
// would be (tile products, attend_cached, cross_attention: the same device
// code), a grid-wide barrier between phases, so that a tracking iteration's
// 28 launches of edgetap-large become one. FP16, tracking steps only (a query
// step runs the kernels one by one). Checked against those kernels launched one
// by one in engine/cuda/tests/test_tracker_program.cpp.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "edgetap/kernels/cuda/tile_products.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"

namespace edgetap::kernels::cuda {

enum class PhaseKind : std::int32_t { normed_product, half_product, attend_cached, cross_attention };

// A tile product (tile_products.hpp): normed_product's rows or half_product's.
struct ProductPhase {
  ProductRows in;
  int depth, outputs;
  const __half* weight;
  ProductOut out;
};

// attend_cached (track_ops.hpp) of one block, on a tracking step; the window
// caches are the program's.
struct AttendPhase {
  const float* qkv;
  const float* qkv_bias;
  std::size_t layer_offset;
  __half* out;
};

// cross_attention (cross_attention.hpp).
struct CrossPhase {
  const float* qkv;
  const float* qkv_bias;
  __half* out;
};

struct Phase {
  PhaseKind kind;
  union {
    ProductPhase product{};
    AttendPhase attend;
    CrossPhase cross;
  };
};

// What every attend_cached phase shares: the tracks' window caches (attend_cached's arguments).
struct WindowCaches {
  const int* slots;
  int window;
  __half* keys;
  __half* values;
  std::size_t slot_stride;
  const float* rel_bias;
  const std::int64_t* query_frame;
  const FrameClock* clock;
};

// The MLP's hidden width over the model's width, for every model the program takes.
inline constexpr int kTrackerProgramMlpRatio = 4;

// Phases per launch: a kernel parameter of at most 4 KB.
inline constexpr int kMaxPhases = 32;

struct TrackerProgram {
  int rows, width, heads;  // the stepped rows; the model's width and heads
  WindowCaches caches;
  int count;
  Phase phases[kMaxPhases];
};

// The phases, with the arguments of the kernels they stand for.
inline Phase normed_product_phase(const float* x, const float* pending_bias, int width, const float* gamma,
                                  const float* beta, const __half* weight, int outputs, const ProductOut& out) {
  Phase ph{};
  ph.kind = PhaseKind::normed_product;
  ph.product = {{x, pending_bias, gamma, beta, nullptr}, width, outputs, weight, out};
  return ph;
}
inline Phase half_product_phase(const __half* a, int depth, const __half* weight, int outputs, const ProductOut& out) {
  Phase ph{};
  ph.kind = PhaseKind::half_product;
  ph.product = {{nullptr, nullptr, nullptr, nullptr, a}, depth, outputs, weight, out};
  return ph;
}
inline Phase attend_phase(const float* qkv, const float* qkv_bias, std::size_t layer_offset, __half* out) {
  Phase ph{};
  ph.kind = PhaseKind::attend_cached;
  ph.attend = {qkv, qkv_bias, layer_offset, out};
  return ph;
}
inline Phase cross_phase(const float* qkv, const float* qkv_bias, __half* out) {
  Phase ph{};
  ph.kind = PhaseKind::cross_attention;
  ph.cross = {qkv, qkv_bias, out};
  return ph;
}

// Whether the program runs a model of this width (128 or 256: edgetap-small's
// and edgetap-large's; narrower ones spill registers on sm_90), an MLP of
// 4 x width and heads of 16, 32 or 64 values.
bool tracker_program_takes(int width, int mlp_hidden, int head_dim);

// Runs program's phases in order, each finished on the whole device before the
// next starts: one cooperative launch of as many 4-warp blocks as fit the
// device at once (capturable in a CUDA graph). std::invalid_argument for a
// model tracker_program_takes refuses or more than kMaxPhases phases.
void run_tracker_program(const TrackerProgram& program, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
