// LayerNorm + product in one kernel (edgetap/kernels/cuda/ln_gemm.hpp) against
// cpu::layer_norm_rows and cpu::gemm_strided, with the normalized rows and the
// weights rounded to half as the CUDA engine holds them in FP16.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/ln_gemm.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

// max|gpu - cpu| / max|cpu|: the sums' order, and a normalized value that rounds
// to the neighbouring half.
constexpr double kTolLnGemm = 2e-3;

void check_ln_gemm(int rows, int width, int outputs, bool pending, std::mt19937& rng) {
  const std::size_t n = static_cast<std::size_t>(rows) * width;
  std::vector<float> x = random_floats(n, -2, 2, rng);
  for (float& v : x) v += 3.f;
  const std::vector<float> bias = random_floats(width, -1, 1, rng);
  const std::vector<float> gamma = random_floats(width, 0.5f, 1.5f, rng), beta = random_floats(width, -1, 1, rng);
  const float s = 1.f / std::sqrt(static_cast<float>(width));
  const std::vector<float> weight = rounded<__half>(random_floats(static_cast<std::size_t>(outputs) * width, -s, s, rng));
  auto d_x = upload<float>(x);
  auto d_bias = upload<float>(bias), d_gamma = upload<float>(gamma), d_beta = upload<float>(beta);
  auto d_weight = upload<__half>(weight);
  DeviceBuffer<float> out(static_cast<std::size_t>(rows) * outputs, testing::kLegacyStream);
  poison(out);
  kc::ln_gemm(d_x.data(), pending ? d_bias.data() : nullptr, rows, width, d_gamma.data(), d_beta.data(),
              d_weight.data(), outputs, out.data(), nullptr);

  std::vector<float> want_x = x;
  if (pending) {
    for (std::size_t i = 0; i < n; ++i) want_x[i] += bias[i % static_cast<std::size_t>(width)];
  }
  std::vector<float> normed(n), want(static_cast<std::size_t>(rows) * outputs);
  cpu::layer_norm_rows(want_x.data(), rows, width, gamma.data(), beta.data(), normed.data());
  normed = rounded<__half>(normed);
  cpu::gemm_strided(rows, outputs, width, normed.data(), width, weight.data(), width, true, want.data(), outputs);
  expect_close(download(out.data(), out.size()), want, kTolLnGemm, "ln_gemm");
  expect_close(download(d_x.data(), n), want_x, 0.0, "ln_gemm's x");
}

TEST(LnGemm, MatchesCpuForTheSessionsProducts) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(61);
  // The qkv products of edgetap-large (256 -> 768), edgetap-small (128 -> 384) and the tiny
  // networks (32 -> 96), and the head (4 outputs: part of a tile).
  for (const auto& [width, outputs] : {std::pair{256, 768}, std::pair{128, 384}, std::pair{32, 96}, std::pair{256, 4}}) {
    for (const int rows : {1, 33, 1280}) {
      SCOPED_TRACE("width " + std::to_string(width) + ", outputs " + std::to_string(outputs) + ", rows " +
                   std::to_string(rows));
      check_ln_gemm(rows, width, outputs, true, rng);
    }
  }
  SCOPED_TRACE("no pending bias");
  check_ln_gemm(70, 128, 384, false, rng);
}

TEST(LnGemm, RefusesShapesItDoesNotTake) {
  EXPECT_FALSE(kc::ln_gemm_takes(48, 96));
  EXPECT_FALSE(kc::ln_gemm_takes(256, 3));
  EXPECT_TRUE(kc::ln_gemm_takes(256, 4));
  EXPECT_THROW(kc::ln_gemm(nullptr, nullptr, 4, 96, nullptr, nullptr, nullptr, 288, nullptr, nullptr),
               std::invalid_argument);
  kc::ln_gemm(nullptr, nullptr, 0, 256, nullptr, nullptr, nullptr, 768, nullptr, nullptr);  // no rows: nothing launched
}

}  // namespace
}  // namespace edgetap::gpu
