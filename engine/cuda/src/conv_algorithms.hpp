// The forward algorithm of each encoder convolution, from cuDNN's heuristic
// ranking (no benchmarking: nothing runs or synchronizes and the choice is the
// same every run): the first deterministic algorithm within the workspace cap,
// else the first that runs at all; never one that changes FP32's math. The
// ranking is asked once per convolution shape and device in the process, so a
// camera's new session (or a new frame size seen before) makes its encoder
// program without asking cuDNN again.
#pragma once

#include <cudnn.h>

#include <cstddef>

namespace edgetap::gpu {

// The most workspace one convolution may ask for before a slower algorithm
// that needs less is preferred: the encoder's convolutions are small and the
// daemon shares the GPU with other cameras.
inline constexpr std::size_t kConvWorkspaceCap = std::size_t{64} << 20;

// What the ranking depends on besides the descriptors' handles.
struct ConvShape {
  cudnnDataType_t data;
  int frames, in_channels, in_height, in_width, out_channels, kernel, stride;
};

// The descriptors must describe `shape` (the math type the one asked for).
cudnnConvolutionFwdAlgoPerf_t forward_algorithm(cudnnHandle_t handle, const ConvShape& shape,
                                                cudnnTensorDescriptor_t in, cudnnFilterDescriptor_t filter,
                                                cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t out);

}  // namespace edgetap::gpu
