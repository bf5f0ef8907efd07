// The CPU kernels against direct, loop-by-loop definitions on fresh random
// inputs (the same checks the CUDA kernels will face against these).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "edgetap/kernels/cpu.hpp"

namespace k = edgetap::kernels::cpu;

namespace {

constexpr float kTolerance = 1e-4f;  // FP32, sums of at most a few thousand terms

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace

TEST(CpuKernels, GemmMatchesTheDefinition) {
  std::mt19937 rng(1);
  const int M = 37, N = 23, K = 51;
  const auto A = random_vector(M * K, rng), B = random_vector(N * K, rng), bias = random_vector(N, rng);
  std::vector<float> C(M * N, 0.5f);
  k::gemm_nt(M, N, K, A.data(), B.data(), bias.data(), C.data(), true);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0.5 + bias[j];
      for (int t = 0; t < K; ++t) ref += A[i * K + t] * B[j * K + t];
      ASSERT_NEAR(C[i * N + j], ref, kTolerance) << i << "," << j;
    }
}

TEST(CpuKernels, StridedGemmReadsColumnBlocksInBothLayouts) {
  std::mt19937 rng(11);
  const int M = 13, N = 9, K = 19, lda = 40, ldb = 50, ldc = 30;  // blocks of wider matrices
  const auto A = random_vector(M * lda, rng), Bt = random_vector(N * ldb, rng), Bn = random_vector(K * ldb, rng);
  for (const bool transposed : {true, false}) {
    std::vector<float> C(M * ldc, 7.f);
    const float* B = (transposed ? Bt : Bn).data() + 3;  // start inside a row too
    k::gemm_strided(M, N, K, A.data() + 5, lda, B, ldb, transposed, C.data() + 2, ldc);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < ldc; ++j) {
        if (j < 2 || j >= 2 + N) {
          ASSERT_EQ(C[i * ldc + j], 7.f) << "wrote outside the block at " << i << "," << j;
          continue;
        }
        double ref = 0;
        for (int t = 0; t < K; ++t) ref += A[i * lda + 5 + t] * (transposed ? B[(j - 2) * ldb + t] : B[t * ldb + (j - 2)]);
        ASSERT_NEAR(C[i * ldc + j], ref, kTolerance) << (transposed ? "B^T " : "B ") << i << "," << j;
      }
  }
}

TEST(CpuKernels, SoftmaxRowsMatchesTheDefinition) {
  std::mt19937 rng(12);
  for (const int cols : {1, 7, 8, 19, 64}) {
    const int rows = 5;
    auto x = random_vector(rows * cols, rng);
    for (float& v : x) v *= 30.f;  // differences well past e^-87 within a row
    std::vector<float> y = x;
    k::softmax_rows(y.data(), rows, cols, 0.7f);
    for (int r = 0; r < rows; ++r) {
      double best = -1e30, total = 0;
      for (int j = 0; j < cols; ++j) best = std::max(best, 0.7 * x[r * cols + j]);
      for (int j = 0; j < cols; ++j) total += std::exp(0.7 * x[r * cols + j] - best);
      for (int j = 0; j < cols; ++j) {
        const double ref = std::exp(0.7 * x[r * cols + j] - best) / total;
        ASSERT_NEAR(y[r * cols + j], ref, 1e-6 + 1e-5 * ref) << cols << " cols, " << r << "," << j;
      }
    }
  }
}

TEST(CpuKernels, AttendCachedSkipsMaskedKeysAndMatchesTheDefinition) {
  std::mt19937 rng(13);
  const int n = 9, dh = 32;
  const auto q = random_vector(dh, rng), keys = random_vector(n * dh, rng), values = random_vector(n * dh, rng);
  std::vector<float> bias = random_vector(n, rng);
  bias[2] = bias[5] = -std::numeric_limits<float>::infinity();
  std::vector<float> out(dh);
  k::attend_cached(q.data(), keys.data(), values.data(), bias.data(), n, dh, 0.25f, out.data());
  std::vector<double> w(n, 0.0);
  double total = 0;
  for (int j = 0; j < n; ++j) {
    if (std::isinf(bias[j])) continue;
    double dot = 0;
    for (int d = 0; d < dh; ++d) dot += q[d] * keys[j * dh + d];
    total += (w[j] = std::exp(0.25 * dot + bias[j]));
  }
  for (int d = 0; d < dh; ++d) {
    double ref = 0;
    for (int j = 0; j < n; ++j) ref += w[j] / total * values[j * dh + d];
    ASSERT_NEAR(out[d], ref, kTolerance) << d;
  }
}

TEST(CpuKernels, Conv2dMatchesDirectConvolution) {
  std::mt19937 rng(2);
  for (const auto [H, W, Cin, Cout, ks, stride] : std::vector<std::array<int, 6>>{{9, 7, 3, 5, 3, 2}, {8, 8, 4, 6, 3, 1}, {5, 6, 7, 3, 1, 1}}) {
    const auto in = random_vector(H * W * Cin, rng), weight = random_vector(Cout * ks * ks * Cin, rng);
    const auto bias = random_vector(Cout, rng);
    const int Ho = (H + stride - 1) / stride, Wo = (W + stride - 1) / stride;
    std::vector<float> out(Ho * Wo * Cout), scratch(k::conv2d_scratch_floats(H, W, Cin, ks, stride));
    k::conv2d_hwc(in.data(), H, W, Cin, weight.data(), bias.data(), Cout, ks, stride, out.data(), scratch.data());
    for (int oy = 0; oy < Ho; ++oy)
      for (int ox = 0; ox < Wo; ++ox)
        for (int o = 0; o < Cout; ++o) {
          double ref = bias[o];
          for (int ky = 0; ky < ks; ++ky)
            for (int kx = 0; kx < ks; ++kx) {
              const int iy = oy * stride + ky - ks / 2, ix = ox * stride + kx - ks / 2;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              for (int c = 0; c < Cin; ++c)
                ref += in[(iy * W + ix) * Cin + c] * weight[((o * ks + ky) * ks + kx) * Cin + c];
            }
          ASSERT_NEAR(out[(oy * Wo + ox) * Cout + o], ref, kTolerance) << "H" << H << " k" << ks << " s" << stride;
        }
  }
}

namespace {

void window_correlation_case(int H, int W, int C, int r) {
  std::mt19937 rng(3 + C + r);
  const int n_desc = 3, k2 = (2 * r + 1) * (2 * r + 1);
  const auto map = random_vector(H * W * C, rng), descs = random_vector(n_desc * C, rng);
  std::uniform_real_distribution<float> where(-4.f, static_cast<float>(std::max(H, W)) + 2.f);  // near and beyond the border
  for (int trial = 0; trial < 80; ++trial) {
    const float x = where(rng), y = where(rng);
    std::vector<float> fast(n_desc * k2), sample(C);
    k::window_correlation_hwc(map.data(), H, W, C, x, y, r, descs.data(), n_desc, fast.data());
    for (int d = 0; d < n_desc; ++d)
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          k::bilinear_sample_hwc(map.data(), H, W, C, x + dx, y + dy, sample.data());
          double ref = 0;
          for (int c = 0; c < C; ++c) ref += sample[c] * descs[d * C + c];
          ref /= std::sqrt(static_cast<double>(C));
          ASSERT_NEAR(fast[d * k2 + (dy + r) * (2 * r + 1) + dx + r], ref, kTolerance)
              << "C " << C << " r " << r << " descriptor " << d << " at " << x << "," << y;
        }
  }
}

}  // namespace

TEST(CpuKernels, WindowCorrelationEqualsSampleThenDot) {
  // C 20: an 8-lane body and a tail; C 64: the network's. Radius 2, 3 and 4: window rows of 6,
  // 8 and 10 cells, i.e. none, one and one-plus-two groups of 8 cells taken side by side.
  for (const auto [H, W, C, r] : std::vector<std::array<int, 4>>{{11, 13, 20, 3}, {24, 26, 64, 3}, {20, 22, 64, 2}, {20, 22, 24, 4}})
    window_correlation_case(H, W, C, r);
}

TEST(CpuKernels, BilinearSampleIsExactAtCellCentresAndZeroOutside) {
  const std::vector<float> map = {1, 10, 2, 20, 3, 30, 4, 40};  // 2x2 cells, 2 channels
  float out[2];
  k::bilinear_sample_hwc(map.data(), 2, 2, 2, 1.f, 1.f, out);
  EXPECT_FLOAT_EQ(out[0], 4.f);
  k::bilinear_sample_hwc(map.data(), 2, 2, 2, 0.5f, 0.5f, out);
  EXPECT_FLOAT_EQ(out[1], 25.f);
  k::bilinear_sample_hwc(map.data(), 2, 2, 2, 1.5f, 0.f, out);  // half the weight falls outside
  EXPECT_FLOAT_EQ(out[0], 1.f);
  k::bilinear_sample_hwc(map.data(), 2, 2, 2, -3.f, 0.f, out);
  EXPECT_FLOAT_EQ(out[0], 0.f);
}

TEST(CpuKernels, Upsample2FollowsTheConvention) {
  // Coarse 2x2, one channel: fine cell i takes coarse i/2; odd cells average with the next, clamped.
  const std::vector<float> coarse = {0, 4, 8, 12};
  std::vector<float> fine(16, 1.f);
  k::add_upsample2_hwc(coarse.data(), 2, 2, 1, fine.data());
  const std::vector<float> expected = {0, 2, 4, 4, 4, 6, 8, 8, 8, 10, 12, 12, 8, 10, 12, 12};
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(fine[i], expected[i] + 1.f) << i;
}

TEST(CpuKernels, LayerNormAndGelu) {
  const std::vector<float> x = {1, 2, 3, 4}, gamma = {1, 1, 2, 2}, beta = {0, 0, 1, 1};
  std::vector<float> y(4);
  k::layer_norm_rows(x.data(), 1, 4, gamma.data(), beta.data(), y.data());
  const float inv = 1.f / std::sqrt(1.25f + 1e-5f);
  EXPECT_NEAR(y[0], -1.5f * inv, 1e-6);
  EXPECT_NEAR(y[3], 2 * 1.5f * inv + 1, 1e-6);
  std::vector<float> g = {-1.f, 0.f, 2.f};
  k::gelu_inplace(g.data(), g.size());
  EXPECT_NEAR(g[0], -0.15865526f, 1e-6);
  EXPECT_NEAR(g[1], 0.f, 1e-7);
  EXPECT_NEAR(g[2], 1.9544997f, 1e-6);
}

TEST(CpuKernels, GeluMatchesTheErfDefinitionEverywhere) {
  // One call over the whole range (8 lanes at a time, then a tail of 1-7) and
  // one value per call (the tail path alone): both against erf.
  std::vector<float> range;
  for (float v = -12.f; v <= 12.f; v += 0.001f) range.push_back(v);
  ASSERT_NE(range.size() % 8, 0u);
  std::vector<float> batched = range;
  k::gelu_inplace(batched.data(), batched.size());
  for (std::size_t i = 0; i < range.size(); ++i) {
    const float v = range[i];
    float single = v;
    k::gelu_inplace(&single, 1);
    const double ref = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    ASSERT_NEAR(batched[i], ref, 1e-6 + 1e-6 * std::abs(ref)) << "at " << v;
    ASSERT_NEAR(single, ref, 1e-6 + 1e-6 * std::abs(ref)) << "at " << v << " alone";
  }
  float huge[3] = {-1e30f, 1e30f, -0.f};
  k::gelu_inplace(huge, 3);
  EXPECT_EQ(huge[0], 0.f);
  EXPECT_EQ(huge[1], 1e30f);
  EXPECT_EQ(huge[2], 0.f);
}
