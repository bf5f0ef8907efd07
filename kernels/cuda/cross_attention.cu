// The cross-track attention, flash-style (cross_attention.hpp).
//
// A block takes 64 query rows of one head, 16 per warp: the rows of one tensor-core
// tile. It streams the keys and values in tiles of 64 through shared memory
// (bias added, rounded to half; the values transposed, so that each fragment is
// one 32-bit load; each tile read from L2 into registers during the products on
// the one before), and each warp keeps its rows' scores, running maximum, sum
// and output in registers:
//   scores = q k^T          4 x (head_dim / 8) mma.sync m16n8k8 per 8 keys
//   p = exp2(scores - max)  q carries 1 / sqrt(head_dim) and log2(e)
//   o = o * alpha + p v     the scores' accumulator layout is the A fragment's,
//                           so p goes to the products without leaving the registers
#include "edgetap/kernels/cuda/cross_attention.hpp"

#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "cross_attention.cuh"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

// Launch: grid (blocks of kBlockRows rows, heads), kCrossWarps warps.
template <int DH>
__global__ void __launch_bounds__(kCrossWarps * kWarp)
    cross_attention_kernel(const float* qkv, const float* bias, int S, int width, __half* out) {
  __shared__ __align__(16) __half keys[kKeyTile][DH + kSharedPad];
  __shared__ __align__(16) __half values_t[DH][kKeyTile + kSharedPad];
  cross_attention_block<DH>(qkv, bias, S, width, out, blockIdx.x, blockIdx.y, keys, values_t);
}

template <int DH>
void launch(const float* qkv, const float* bias, int S, int heads, __half* out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(blocks_of(S, kBlockRows)), static_cast<unsigned>(heads));
  cross_attention_kernel<DH><<<grid, kCrossWarps * kWarp, 0, stream>>>(qkv, bias, S, heads * DH, out);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool cross_attention_takes(int head_dim) { return head_dim == 16 || head_dim == 32 || head_dim == 64; }

void cross_attention(const float* qkv, const float* qkv_bias, int S, int heads, int head_dim, __half* out,
                     cudaStream_t stream) {
  if (!cross_attention_takes(head_dim)) {
    throw std::invalid_argument("cross_attention takes heads of 16, 32 or 64 values, not " + std::to_string(head_dim));
  }
  if (S == 0 || heads == 0) return;
  checked_count(static_cast<std::size_t>(S) * 3 * heads * head_dim);  // the kernel's row offsets
  switch (head_dim) {
    case 16: launch<16>(qkv, qkv_bias, S, heads, out, stream); break;
    case 32: launch<32>(qkv, qkv_bias, S, heads, out, stream); break;
    default: launch<64>(qkv, qkv_bias, S, heads, out, stream); break;
  }
}

}  // namespace edgetap::kernels::cuda
