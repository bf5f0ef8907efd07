// LayerNorm + the product that reads it (ln_gemm.hpp). A block of 4 warps
// normalizes 16 rows into shared memory (row_block.cuh), then walks the output
// columns 64 at a time, 16 per warp, the weights read straight from L2 a pass ahead.
#include "edgetap/kernels/cuda/ln_gemm.hpp"

#include <cuda_fp16.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "edgetap/kernels/cuda/check.hpp"
#include "row_block.cuh"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

constexpr int kOutputChunk = 64;  // output columns per pass over the normalized rows
constexpr int kTilesPerWarp = kOutputChunk / (kRowWarps * kMmaK);

// Launch: blocks of kRowBlock rows, kRowWarps warps.
template <int W>
__global__ void __launch_bounds__(kRowWarps * kWarp)
    ln_gemm_kernel(float* x, const float* pending, int rows, const float* gamma, const float* beta,
                   const __half* weight, int outputs, float* out) {
  __shared__ __align__(16) __half normed[kRowBlock][padded_row(W)];
  const int warp = threadIdx.x / kWarp;
  const int row0 = blockIdx.x * kRowBlock;
  // Each pass's fragments are loaded during the pass before it, the first's during the LayerNorm.
  int c0 = warp * kTilesPerWarp * kMmaK;
  BFragments<W / kKBlock, kTilesPerWarp> next;
  load_fragments(next, weight, W, c0, 0, outputs);
  normalize_rows<W>(x, pending, rows, row0, gamma, beta, normed);
  __syncthreads();

  for (; c0 < outputs; c0 += kOutputChunk) {
    const BFragments<W / kKBlock, kTilesPerWarp> now = next;
    if (c0 + kOutputChunk < outputs) load_fragments(next, weight, W, c0 + kOutputChunk, 0, outputs);
    float acc[kRowTiles][kTilesPerWarp][4] = {};
    multiply_fragments(acc, normed, 0, now);
    store_tiles(acc, rows, row0, out, outputs, c0, outputs, /*add=*/false);
  }
}

}  // namespace

bool ln_gemm_takes(int width, int outputs) {
  return row_block_takes(width) && outputs > 0 && outputs % 2 == 0;
}

void ln_gemm(float* x, const float* pending_bias, int rows, int width, const float* gamma, const float* beta,
             const __half* weight, int outputs, float* out, cudaStream_t stream) {
  if (!ln_gemm_takes(width, outputs)) {
    throw std::invalid_argument("ln_gemm takes widths 32, 64, 128 or 256 and an even number of outputs, not " +
                                std::to_string(width) + " and " + std::to_string(outputs));
  }
  if (rows == 0) return;
  checked_count(static_cast<std::size_t>(rows) * (width > outputs ? width : outputs));
  with_row_width(width, [&](auto w) {
    ln_gemm_kernel<decltype(w)::value><<<blocks_of(rows, kRowBlock), kRowWarps * kWarp, 0, stream>>>(
        x, pending_bias, rows, gamma, beta, weight, outputs, out);
  });
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace edgetap::kernels::cuda
