// The tracker's products with their LayerNorm and epilogue (tile_products.hpp).
//
// A block of 4 warps takes 16 rows and 64 output columns (16 a warp): the
// grid's x walks the rows, its y the columns, so a product of 512 rows by 768
// columns runs as 32 x 12 blocks. The block normalizes its rows (or stages them
// as they are) into shared memory while each warp loads its first 256 k values
// of weight fragments straight from L2; the products then walk k 256 at a time,
// the next fragments loaded during the current ones' products. A row block's
// LayerNorm is made once per column block: cheap beside the weights at the
// tracker's widths (a row of 256 floats against 64 x 256 halves of weights).
#include "edgetap/kernels/cuda/tile_products.hpp"

#include <cuda_fp16.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "edgetap/kernels/cuda/check.hpp"
#include "tile_products.cuh"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

// Launch: (row blocks of kRowBlock, column blocks of kColumnBlock), kRowWarps warps.
template <int K, bool kNormalize>
__global__ void __launch_bounds__(kRowWarps * kWarp)
    tile_product_kernel(ProductRows in, int rows, const __half* weight, int outputs, ProductOut o) {
  __shared__ __align__(16) TileRows<K> tile;
  tile_product_block<K, kNormalize>(in, rows, weight, outputs, o, blockIdx.x, blockIdx.y, tile);
}

bool writes_somewhere(const ProductOut& o) { return (o.out != nullptr) != (o.out_half != nullptr); }

template <bool kNormalize>
void launch_product(const ProductRows& in, int rows, int depth, const __half* weight, int outputs, const ProductOut& o,
                    cudaStream_t stream) {
  if (rows == 0) return;
  if (!writes_somewhere(o)) throw std::invalid_argument("a tile product writes either float or half rows");
  checked_count(static_cast<std::size_t>(rows) * (depth > outputs ? depth : outputs));
  const dim3 grid(blocks_of(rows, kRowBlock), blocks_of(outputs, kColumnBlock));
  with_depth(depth, [&](auto k) {
    constexpr int K = decltype(k)::value;
    if constexpr (!kNormalize || row_block_takes(K)) {  // the LayerNorm's widths only
      tile_product_kernel<K, kNormalize><<<grid, kRowWarps * kWarp, 0, stream>>>(in, rows, weight, outputs, o);
    }
  });
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool normed_product_takes(int width, int outputs) {
  return row_block_takes(width) && outputs > 0 && outputs % 2 == 0;
}

bool half_product_takes(int depth, int outputs) {
  return staged_depth_takes(depth) && outputs > 0 && outputs % 2 == 0;
}

void normed_product(const float* x, const float* pending_bias, int rows, int width, const float* gamma,
                    const float* beta, const __half* weight, int outputs, const ProductOut& out, cudaStream_t stream) {
  if (!normed_product_takes(width, outputs)) {
    throw std::invalid_argument("normed_product takes widths 32, 64, 128 or 256 and an even number of outputs, not " +
                                std::to_string(width) + " and " + std::to_string(outputs));
  }
  launch_product<true>(ProductRows{x, pending_bias, gamma, beta, nullptr}, rows, width, weight, outputs, out, stream);
}

void half_product(const __half* a, int rows, int depth, const __half* weight, int outputs, const ProductOut& out,
                  cudaStream_t stream) {
  if (!half_product_takes(depth, outputs)) {
    throw std::invalid_argument("half_product takes depths 32, 64, 128, 256, 512 or 1024 and an even number of "
                                "outputs, not " + std::to_string(depth) + " and " + std::to_string(outputs));
  }
  launch_product<false>(ProductRows{nullptr, nullptr, nullptr, nullptr, a}, rows, depth, weight, outputs, out, stream);
}

}  // namespace edgetap::kernels::cuda
