// CPU reference kernels of the EdgeTAP network, FP32. Feature maps are HWC
// (channels last, row-major): the D-vector of a cell is contiguous, which is
// what bilinear sampling and correlation read. These are the readable
// references every CUDA kernel is checked against.
#pragma once

#include <cstddef>

namespace edgetap::kernels::cpu {

// C[M, N] = A[M, K] * B[N, K]^T (+ bias[N]) (+ C when accumulate). Row-major.
// Uses BLAS when the build has it.
void gemm_nt(int M, int N, int K, const float* A, const float* B, const float* bias, float* C, bool accumulate = false);

// C = A * op(B) (+ C when accumulate), row-major with row strides lda, ldb, ldc
// (so A, B and C can be column blocks of wider matrices): A is [M, K]; op(B) is
// B[N, K]^T when b_transposed, else B[K, N]; C is [M, N].
void gemm_strided(int M, int N, int K, const float* A, int lda, const float* B, int ldb, bool b_transposed, float* C,
                  int ldc, bool accumulate = false);

// 2-D convolution, HWC in and out, zero padding k/2, square kernel k in {1, 3},
// stride 1 or 2. `weight` is [Cout][k][k][Cin]; `bias` [Cout] or null.
// `scratch` must hold conv2d_scratch_floats(...) floats. Output size: ceil(H/stride) x ceil(W/stride).
std::size_t conv2d_scratch_floats(int H, int W, int Cin, int k, int stride);
void conv2d_hwc(const float* in, int H, int W, int Cin, const float* weight, const float* bias, int Cout, int k,
                int stride, float* out, float* scratch);

// out[i] = max(out[i], 0), or out[i] = max(out[i] + add[i], 0) with `add`.
void relu_inplace(float* x, std::size_t n, const float* add = nullptr);

// out[H, W, C] += upsample2(coarse[H/2, W/2, C]) with the network's convention:
// fine cell i takes coarse i/2, odd cells average with the next (clamped) cell.
// H and W are twice the coarse size.
void add_upsample2_hwc(const float* coarse, int Hc, int Wc, int C, float* fine);

// Bilinear sample of one C-vector at (x, y) in cell units (cell centres at
// integers); neighbours outside the map contribute zero.
void bilinear_sample_hwc(const float* map, int H, int W, int C, float x, float y, float* out);

// Local correlation: for a point at (x, y) in cell units, the (2r+1)^2 window
// of offsets (row-major, dy outer) sampled bilinearly and dotted with each of
// `n_desc` descriptors (C floats each, contiguous), scaled by 1/sqrt(C).
// Writes n_desc * (2r+1)^2 values, descriptor outer.
void window_correlation_hwc(const float* map, int H, int W, int C, float x, float y, int radius, const float* descs,
                            int n_desc, float* out);

// Row-wise LayerNorm over `width` with gamma/beta, eps 1e-5.
void layer_norm_rows(const float* in, int rows, int width, const float* gamma, const float* beta, float* out);
// Exact GELU (erf form), in place.
void gelu_inplace(float* x, std::size_t n);

// Row-wise softmax of scale * x over `cols`, in place (rows of stride cols), scale > 0.
void softmax_rows(float* x, int rows, int cols, float scale);

// One query against n <= kMaxCachedKeys cached keys: out[dh] = sum_j
// softmax_j(scale * q.k_j + bias_j) v_j, keys and values [n][dh] contiguous.
// bias_j = -infinity leaves entry j out; at least one entry must be in.
inline constexpr int kMaxCachedKeys = 64;
void attend_cached(const float* q, const float* keys, const float* values, const float* bias, int n, int dh,
                   float scale, float* out);

}  // namespace edgetap::kernels::cpu
