// The tracker's matrix products on the tensor cores with what surrounds them:
// the LayerNorm before (normed_product) and the bias, GELU and residual sum
// after (ProductOut), so that each is one kernel in place of two to four. The
// GPU twins of cpu::layer_norm_rows, cpu::gemm_strided and the bias and GELU
// of engine::StreamingSession (checked in engine/cuda/tests/test_tile_products.cpp).
// FP16: the rows are rounded to half for the product (mma.sync m16n8k8, sm_75
// and later), which accumulates in float.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace edgetap::kernels::cuda {

// Where a product's rows come from: LayerNorm(x + pending) (normed_product:
// x, pending, gamma, beta) or half rows as they are (half_product: a).
struct ProductRows {
  const float* x;
  const float* pending;
  const float* gamma;
  const float* beta;
  const __half* a;
};

// What a product does with each value v = (A . weight^T)[r][n] it accumulated.
struct ProductOut {
  const float* bias = nullptr;  // [outputs], added to v when given
  bool gelu = false;            // exact GELU (x Phi(x)) after the bias
  // Float rows [rows][outputs]: out = v, or with `add` out += v + residual_bias
  // (when given: the bias still pending on a residual stream that out holds).
  float* out = nullptr;
  bool add = false;
  const float* residual_bias = nullptr;
  __half* out_half = nullptr;  // half rows [rows][outputs] instead of out
};

// Whether normed_product takes rows of `width` values (32, 64, 128 or 256) and
// `outputs` output columns (even).
bool normed_product_takes(int width, int outputs);

// out <- LayerNorm(x[r] + pending_bias) . weight^T for every row r of x
// [rows][width] (pending_bias [width] when given; x is only read). LayerNorm as
// cpu::layer_norm_rows (gamma, beta [width]); weight [outputs][width].
// std::invalid_argument for a shape normed_product_takes refuses.
void normed_product(const float* x, const float* pending_bias, int rows, int width, const float* gamma,
                    const float* beta, const __half* weight, int outputs, const ProductOut& out, cudaStream_t stream);

// Whether half_product takes rows of `depth` values (32, 64, 128, 256, 512 or
// 1,024) and `outputs` output columns (even).
bool half_product_takes(int depth, int outputs);

// out <- a . weight^T: a [rows][depth] half (16-byte aligned), weight
// [outputs][depth]. std::invalid_argument for a shape half_product_takes refuses.
void half_product(const __half* a, int rows, int depth, const __half* weight, int outputs, const ProductOut& out,
                  cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
