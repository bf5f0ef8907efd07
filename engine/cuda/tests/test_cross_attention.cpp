// The flash-style cross-track attention (edgetap/kernels/cuda/cross_attention.hpp)
// against the CPU engine's (engine::StreamingSession::cross_track): per head,
// scores = Q K^T, softmax of scores / sqrt(head_dim), O = P V, with the CPU
// kernels it uses, on q, k and v (bias added) rounded to half as the kernel reads them.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/cross_attention.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

std::vector<float> cross_attention_on_cpu(const std::vector<float>& qkv, const std::vector<float>& bias, int S, int heads,
                                          int dh) {
  const int width = heads * dh, ld = 3 * width;
  std::vector<float> biased(qkv.size());
  for (std::size_t i = 0; i < qkv.size(); ++i) biased[i] = qkv[i] + bias[i % static_cast<std::size_t>(ld)];
  biased = rounded<__half>(biased);
  std::vector<float> scores(static_cast<std::size_t>(S) * S), out(static_cast<std::size_t>(S) * width);
  for (int h = 0; h < heads; ++h) {
    const float* q = biased.data() + h * dh;
    cpu::gemm_strided(S, S, dh, q, ld, q + width, ld, true, scores.data(), S);
    cpu::softmax_rows(scores.data(), S, S, 1.f / std::sqrt(static_cast<float>(dh)));
    cpu::gemm_strided(S, dh, S, scores.data(), S, q + 2 * width, ld, false, out.data() + h * dh, width);
  }
  return out;
}

void check_cross_attention(int S, int heads, int dh, float spread, std::mt19937& rng) {
  const int width = heads * dh;
  const std::vector<float> qkv = random_floats(static_cast<std::size_t>(S) * 3 * width, -spread, spread, rng);
  const std::vector<float> bias = random_floats(static_cast<std::size_t>(3) * width, -0.5f, 0.5f, rng);
  auto d_qkv = upload<float>(qkv);
  auto d_bias = upload<float>(bias);
  DeviceBuffer<__half> out(static_cast<std::size_t>(S) * width, testing::kLegacyStream);
  poison(out);
  kc::cross_attention(d_qkv.data(), d_bias.data(), S, heads, dh, out.data(), nullptr);
  expect_close(download(out.data(), out.size()), cross_attention_on_cpu(qkv, bias, S, heads, dh), kTolF16,
               "cross_attention");
}

TEST(CrossAttention, MatchesCpuForEveryHeadSizeItTakes) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(41);
  // Rows: one, fewer than a key tile, a partial last tile and block, whole tiles, the
  // size of 1,024 points with a 16 x 16 support grid.
  for (const auto& [heads, dh] : {std::pair{8, 32}, std::pair{2, 16}, std::pair{4, 64}}) {
    for (const int S : {1, 37, 130, 256, 1280}) {
      SCOPED_TRACE("heads " + std::to_string(heads) + ", head_dim " + std::to_string(dh) + ", rows " +
                   std::to_string(S));
      check_cross_attention(S, heads, dh, 1.f, rng);
    }
  }
}

TEST(CrossAttention, PeakedScoresKeepTheirLargestTerm) {
  EDGETAP_REQUIRE_GPU();
  // Scores of tens: the online softmax's running maximum changes between key tiles and
  // exp of an unshifted score would overflow.
  std::mt19937 rng(42);
  check_cross_attention(300, 8, 32, 4.f, rng);
}

TEST(CrossAttention, RefusesHeadSizesItDoesNotTake) {
  EXPECT_FALSE(kc::cross_attention_takes(8));
  EXPECT_FALSE(kc::cross_attention_takes(48));
  EXPECT_TRUE(kc::cross_attention_takes(32));
  EXPECT_THROW(kc::cross_attention(nullptr, nullptr, 4, 2, 24, nullptr, nullptr), std::invalid_argument);
  kc::cross_attention(nullptr, nullptr, 0, 8, 32, nullptr, nullptr);  // no rows: nothing launched
}

}  // namespace
}  // namespace edgetap::gpu
