// A LayerNorm and the matrix product that reads it, in one kernel: the
// normalized rows stay in shared memory. The GPU twin of layer_norm_rows
// followed by a product of its output (checked in engine/cuda/tests/test_ln_gemm.cpp).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace edgetap::kernels::cuda {

// Whether ln_gemm takes rows of `width` values (32, 64, 128 or 256) and `outputs`
// output columns (even).
bool ln_gemm_takes(int width, int outputs);

// For every row of x [rows][width]: x += pending_bias (written back, when given),
// then out[r][n] = LayerNorm(x[r]) . weight[n] for n < outputs (float, without a
// bias: track_ops.hpp's convention), weight [outputs][width]. LayerNorm as
// layer_norm_rows (gamma, beta [width]); the normalized rows are rounded to half
// for the product (mma.sync m16n8k8, sm_75 and later), which accumulates in float.
// Blocks of 16 rows. std::invalid_argument for a shape ln_gemm_takes refuses.
void ln_gemm(float* x, const float* pending_bias, int rows, int width, const float* gamma, const float* beta,
             const __half* weight, int outputs, float* out, cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
