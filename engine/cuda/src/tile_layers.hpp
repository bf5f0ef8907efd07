// An FP16 session's layers after `inp` through the tile products
// (FusedKernels::products): each block, cross-track layer and the head's
// product as the phases of kernels/cuda/tracker_program.hpp, made once per
// iteration and run either as one tracker program (FusedKernels::program, on a
// tracking step) or kernel by kernel. Every product adds its own bias where it
// writes, and the first product into x also the bias `inp` left pending, so
// that none is left at the end: x then holds the iteration's output.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "cross_track_blocks.hpp"
#include "edgetap/engine/model_config.hpp"
#include "edgetap/gpu/device_weights.hpp"
#include "edgetap/gpu/gemm.hpp"
#include "edgetap/kernels/cuda/tracker_program.hpp"

namespace edgetap::gpu {

// The session's buffers the layers read and write (they move when it grows).
struct TileLayerBuffers {
  float* x;         // [S][width]: the residual stream
  float* qkv;       // [S][3 width]
  float* head_acc;  // [S][4]
  __half* attended;  // [S][width]
  __half* hidden;    // [S][mlp_ratio width]
  kernels::cuda::WindowCaches caches;
};

class TileLayers {
 public:
  // `program`: tracking steps run as one tracker program. `flash_cross`: the
  // cross-track attention in its flash-style kernel (else through cross_blocks).
  TileLayers(const engine::ModelConfig& config, const DeviceTrackerWeights<__half>& weights, const Blas& blas,
             CrossTrackBlocks<__half>& cross_blocks, bool program, bool flash_cross);

  // Iteration it's blocks, cross-track layers and head product for S rows, x owing `pending`.
  void enqueue(const TileLayerBuffers& b, int it, int S, bool query_step, const float* pending, cudaStream_t stream);

 private:
  void make_phases(const TileLayerBuffers& b, int it, const float* pending);
  void run_one_by_one(const TileLayerBuffers& b, int S, bool query_step, cudaStream_t stream) const;
  void run_as_program(const TileLayerBuffers& b, int S, cudaStream_t stream) const;

  const engine::ModelConfig& c_;
  const DeviceTrackerWeights<__half>& w_;
  const Blas& blas_;
  CrossTrackBlocks<__half>& cross_blocks_;
  const bool program_, flash_cross_;
  std::vector<kernels::cuda::Phase> phases_;  // this iteration's, kept between iterations for their room
};

}  // namespace edgetap::gpu
