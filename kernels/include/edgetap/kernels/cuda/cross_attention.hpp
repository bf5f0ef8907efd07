// The cross-track layer's attention in one kernel, flash-style: every stepped
// row attends to all of them with its scores kept on chip, on FP16 tensor
// cores. The GPU twin of the attention inside engine::StreamingSession::cross_track
// (checked in engine/cuda/tests/test_cross_attention.cpp).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace edgetap::kernels::cuda {

// Whether cross_attention takes heads of head_dim values (16, 32 or 64).
bool cross_attention_takes(int head_dim);

// For every row r and head h: out[r][h head_dim + d] = sum_c softmax_c(q_r . k_c /
// sqrt(head_dim)) v_c[d] over the S rows c, where q, k and v are the q, k and v
// blocks of qkv [S][3 width] (float, without its bias) plus qkv_bias [3 width],
// heads as contiguous head_dim columns, width = heads * head_dim.
// The scores never leave the chip: blocks of 64 rows per head stream the keys
// and values in tiles of 64 with an online softmax. q, k, v and the
// probabilities are rounded to half for the products (mma.sync m16n8k8, sm_75
// and later), which accumulate in float. std::invalid_argument for a head_dim
// cross_attention_takes refuses.
void cross_attention(const float* qkv, const float* qkv_bias, int S, int heads, int head_dim, __half* out,
                     cudaStream_t stream);

}  // namespace edgetap::kernels::cuda
