// The encoder's CUDA kernels around cuDNN's convolutions (gpu::CudaEncoder):
// the input normalization and the epilogue every convolution ends with. Each
// is the GPU twin of a step of engine::CpuEncoder::encode and is checked
// through the encoder's parity test (engine/cuda/tests/test_encoder.cpp). T is the
// storage precision, float or __half; arithmetic is float. Every function
// launches on `stream` and checks the launch; none synchronizes.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace edgetap::kernels::cuda {

// out[i] = rgb[i] * scale + shift over a height x width x 3 uint8 image with
// contiguous rows (CpuEncoder's (v / 255 - mean) / std as one multiply-add).
template <class T>
void normalize_rgb(const std::uint8_t* rgb, int height, int width, float scale, float shift, T* out,
                   cudaStream_t stream);

// What follows a convolution, on `frames` height x width x channels HWC maps
// stored one after the other (a batch):
//   v = acc + bias[c]                  (cuDNN's output has no bias)
//   v = residual + v                   if residual (relu(x + res(x)) stages)
//   v = v + upsample2(coarse)          if coarse (the top-down lateral sums;
//                                      cpu::add_upsample2_hwc's convention,
//                                      coarse is height/2 x width/2 x channels
//                                      per frame)
//   out = relu ? max(v, 0) : v
// out may alias acc or residual: each element is read before it is written,
// by the same thread.
template <class T>
struct ConvEpilogue {
  const T* acc = nullptr;
  const float* bias = nullptr;
  const T* residual = nullptr;
  const T* coarse = nullptr;
  int height = 0, width = 0, channels = 0;
  int frames = 1;
  bool relu = false;
  T* out = nullptr;
};

template <class T>
void conv_epilogue(const ConvEpilogue<T>& params, cudaStream_t stream);

// Copies one frame of batched maps (each map's frames one after the other,
// `vectors` 16-byte words a frame) into single-frame maps: map m's frame
// *frame to map[m].to. The frame index is read from device memory when the
// kernel runs, so a captured graph copies whichever frame the host names.
struct BatchedFrameCopy {
  static constexpr int kMaxMaps = 8;
  struct Map {
    const uint4* from = nullptr;  // frame 0
    uint4* to = nullptr;
    unsigned vectors = 0;
  };
  Map map[kMaxMaps];
  int maps = 0;
};

void copy_batched_frame(const BatchedFrameCopy& copy, const int* frame, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
