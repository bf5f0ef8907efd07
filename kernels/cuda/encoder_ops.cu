// The encoder's element-wise kernels (declared in encoder_ops.hpp): memory
// bound, one thread per value, grid-stride so any map size fits one launch
// shape. Indices are 32-bit (64-bit division is emulated and the epilogue
// divides by the channel count); a map is checked to fit. The convolutions
// themselves are cuDNN's.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include "edgetap/kernels/cuda/check.hpp"
#include "edgetap/kernels/cuda/encoder_ops.hpp"

namespace edgetap::kernels::cuda {

namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU several times over; the grid-stride
// loops cover larger maps.
constexpr std::size_t kMaxBlocks = 4096;

__device__ __forceinline__ float load(const float* p, unsigned i) { return p[i]; }
__device__ __forceinline__ float load(const __half* p, unsigned i) { return __half2float(p[i]); }
__device__ __forceinline__ void store(float* p, unsigned i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__half* p, unsigned i, float v) { p[i] = __float2half(v); }

// The grid for n values; throws if n does not fit the kernels' 32-bit indices
// (a map of over 4 G values: never a camera frame's).
int blocks_for(std::size_t n) {
  if (n > std::numeric_limits<unsigned>::max() - static_cast<std::size_t>(kThreads) * kMaxBlocks) {
    throw std::length_error("encoder_ops: map too large for 32-bit indices");
  }
  return static_cast<int>(std::min((n + kThreads - 1) / kThreads, kMaxBlocks));
}

template <class T>
struct NormalizeParams {
  const std::uint8_t* rgb;
  unsigned n;
  float scale, shift;
  T* out;
};

template <class T>
__global__ void __launch_bounds__(kThreads) normalize_rgb_kernel(NormalizeParams<T> p) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += gridDim.x * blockDim.x) {
    store(p.out, i, static_cast<float>(p.rgb[i]) * p.scale + p.shift);
  }
}

// The coarse map's value at fine cell (fy, fx), channel c: rows first, then
// columns, exactly as cpu::add_upsample2_hwc (odd cells average their two or
// four coarse neighbours, clamped at the last row/column).
template <class T>
__device__ float upsample2_at(const T* coarse, int Hc, int Wc, int C, int fy, int fx, int c) {
  const int y0 = fy / 2, y1 = (fy % 2 == 0) ? y0 : min(y0 + 1, Hc - 1);
  const int x0 = fx / 2, x1 = (fx % 2 == 0) ? x0 : min(x0 + 1, Wc - 1);
  auto at = [&](int y, int x) { return load(coarse, (static_cast<unsigned>(y) * Wc + x) * C + c); };
  const float a = at(y0, x0), b = at(y0, x1);
  const float left = y0 == y1 ? a : 0.5f * (a + at(y1, x0));
  const float right = y0 == y1 ? b : 0.5f * (b + at(y1, x1));
  return x0 == x1 ? left : 0.5f * (left + right);
}

// No __restrict__: out may alias acc or residual (in-place stages).
template <class T>
__global__ void __launch_bounds__(kThreads) conv_epilogue_kernel(ConvEpilogue<T> p) {
  const unsigned frame_pixels = static_cast<unsigned>(p.height) * p.width;
  const unsigned n = frame_pixels * p.frames * p.channels;
  const unsigned C = p.channels, W = p.width;
  const unsigned coarse_frame = static_cast<unsigned>(p.height / 2) * (p.width / 2) * C;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int c = static_cast<int>(i % C);
    float v = load(p.acc, i) + p.bias[c];
    if (p.residual != nullptr) v = load(p.residual, i) + v;
    if (p.coarse != nullptr) {
      const unsigned pixel = i / C, frame = pixel / frame_pixels, in_frame = pixel % frame_pixels;
      const int y = static_cast<int>(in_frame / W), x = static_cast<int>(in_frame % W);
      v += upsample2_at(p.coarse + frame * coarse_frame, p.height / 2, p.width / 2, p.channels, y, x, c);
    }
    store(p.out, i, p.relu ? fmaxf(v, 0.f) : v);
  }
}

__global__ void __launch_bounds__(kThreads) copy_batched_frame_kernel(BatchedFrameCopy p, const int* frame) {
  const BatchedFrameCopy::Map& m = p.map[blockIdx.y];
  const uint4* from = m.from + static_cast<std::size_t>(*frame) * m.vectors;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < m.vectors; i += gridDim.x * blockDim.x) m.to[i] = from[i];
}

}  // namespace

void copy_batched_frame(const BatchedFrameCopy& copy, const int* frame, cudaStream_t stream) {
  if (copy.maps == 0) return;
  std::size_t most = 0;
  for (int m = 0; m < copy.maps; ++m) most = std::max<std::size_t>(most, copy.map[m].vectors);
  const dim3 grid(static_cast<unsigned>(blocks_for(most)), static_cast<unsigned>(copy.maps));
  copy_batched_frame_kernel<<<grid, kThreads, 0, stream>>>(copy, frame);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void normalize_rgb(const std::uint8_t* rgb, int height, int width, float scale, float shift, T* out,
                   cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(height) * width * 3;
  if (n == 0) return;
  const int blocks = blocks_for(n);
  const NormalizeParams<T> params{rgb, static_cast<unsigned>(n), scale, shift, out};
  normalize_rgb_kernel<T><<<blocks, kThreads, 0, stream>>>(params);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

template <class T>
void conv_epilogue(const ConvEpilogue<T>& params, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(params.height) * params.width * params.channels * params.frames;
  if (n == 0) return;
  const int blocks = blocks_for(n);
  conv_epilogue_kernel<T><<<blocks, kThreads, 0, stream>>>(params);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

// The two storage precisions, instantiated here only.
template void normalize_rgb<float>(const std::uint8_t*, int, int, float, float, float*, cudaStream_t);
template void normalize_rgb<__half>(const std::uint8_t*, int, int, float, float, __half*, cudaStream_t);
template void conv_epilogue<float>(const ConvEpilogue<float>&, cudaStream_t);
template void conv_epilogue<__half>(const ConvEpilogue<__half>&, cudaStream_t);

}  // namespace edgetap::kernels::cuda
