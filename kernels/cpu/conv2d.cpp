// Convolution as im2col + GEMM in HWC layout. A row of the column matrix is
// one output pixel's (ky, kx, cin) patch, matching the [Cout][k][k][Cin] weights.
#include <cstring>

#include "edgetap/kernels/cpu.hpp"

namespace edgetap::kernels::cpu {

std::size_t conv2d_scratch_floats(int H, int W, int Cin, int k, int stride) {
  if (k == 1 && stride == 1) return 0;
  const std::size_t Ho = static_cast<std::size_t>((H + stride - 1) / stride);
  const std::size_t Wo = static_cast<std::size_t>((W + stride - 1) / stride);
  return Ho * Wo * static_cast<std::size_t>(k * k * Cin);
}

void conv2d_hwc(const float* in, int H, int W, int Cin, const float* weight, const float* bias, int Cout, int k,
                int stride, float* out, float* scratch) {
  const int Ho = (H + stride - 1) / stride, Wo = (W + stride - 1) / stride;
  if (k == 1 && stride == 1) {
    gemm_nt(H * W, Cout, Cin, in, weight, bias, out);
    return;
  }
  const int pad = k / 2;
  const std::size_t row = static_cast<std::size_t>(k * k * Cin);
  for (int oy = 0; oy < Ho; ++oy) {
    for (int ox = 0; ox < Wo; ++ox) {
      float* col = scratch + (static_cast<std::size_t>(oy) * Wo + ox) * row;
      for (int ky = 0; ky < k; ++ky) {
        const int iy = oy * stride + ky - pad;
        for (int kx = 0; kx < k; ++kx) {
          const int ix = ox * stride + kx - pad;
          float* dst = col + static_cast<std::size_t>(ky * k + kx) * Cin;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
            std::memset(dst, 0, sizeof(float) * Cin);
          } else {
            std::memcpy(dst, in + (static_cast<std::size_t>(iy) * W + ix) * Cin, sizeof(float) * Cin);
          }
        }
      }
    }
  }
  gemm_nt(Ho * Wo, Cout, static_cast<int>(row), scratch, weight, bias, out);
}

}  // namespace edgetap::kernels::cpu
