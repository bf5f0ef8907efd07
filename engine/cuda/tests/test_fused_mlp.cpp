// The fused LayerNorm + MLP (edgetap/kernels/cuda/fused_mlp.hpp) against the
// CPU engine's block (engine::StreamingSession): x += pending bias, LayerNorm,
// fc1, its bias, exact GELU, fc2 added to x, with the CPU kernels it uses and
// the roundings the CUDA engine makes in FP16 (the normalized rows, the weights
// and the activated hidden layer in half).
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/fused_mlp.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

// max|gpu - cpu| / max|x|: the references round where the kernel does, so what is
// left is the order of the sums and a value that rounds to the neighbouring half.
constexpr double kTolFusedMlp = 2e-3;

struct MlpCase {
  int rows, width, hidden;
  bool pending;
};

void check_fused_mlp(const MlpCase& c, std::mt19937& rng) {
  const std::size_t n = static_cast<std::size_t>(c.rows) * c.width;
  std::vector<float> x = random_floats(n, -2, 2, rng);
  for (float& v : x) v += 3.f;  // a residual stream's mean far from 0
  const std::vector<float> pending = random_floats(c.width, -1, 1, rng);
  const std::vector<float> gamma = random_floats(c.width, 0.5f, 1.5f, rng), beta = random_floats(c.width, -1, 1, rng);
  const float s1 = 1.f / std::sqrt(static_cast<float>(c.width)), s2 = 1.f / std::sqrt(static_cast<float>(c.hidden));
  const std::vector<float> fc1 = rounded<__half>(random_floats(static_cast<std::size_t>(c.hidden) * c.width, -s1, s1, rng));
  const std::vector<float> fc2 = rounded<__half>(random_floats(static_cast<std::size_t>(c.width) * c.hidden, -s2, s2, rng));
  const std::vector<float> fc1_bias = random_floats(c.hidden, -0.5f, 0.5f, rng);

  auto d_x = upload<float>(x);
  auto d_pending = upload<float>(pending), d_gamma = upload<float>(gamma), d_beta = upload<float>(beta);
  auto d_fc1 = upload<__half>(fc1), d_fc2 = upload<__half>(fc2);
  auto d_fc1_bias = upload<float>(fc1_bias);
  const kc::MlpWeights mlp{d_fc1.data(), d_fc1_bias.data(), d_fc2.data(), c.width, c.hidden};
  kc::fused_mlp(d_x.data(), c.pending ? d_pending.data() : nullptr, c.rows, d_gamma.data(), d_beta.data(), mlp, nullptr);

  std::vector<float> want = x;
  if (c.pending) {
    for (std::size_t i = 0; i < n; ++i) want[i] += pending[i % static_cast<std::size_t>(c.width)];
  }
  std::vector<float> normed(n), hidden(static_cast<std::size_t>(c.rows) * c.hidden), out(n);
  cpu::layer_norm_rows(want.data(), c.rows, c.width, gamma.data(), beta.data(), normed.data());
  normed = rounded<__half>(normed);
  cpu::gemm_strided(c.rows, c.hidden, c.width, normed.data(), c.width, fc1.data(), c.width, true, hidden.data(), c.hidden);
  for (std::size_t i = 0; i < hidden.size(); ++i) hidden[i] += fc1_bias[i % static_cast<std::size_t>(c.hidden)];
  cpu::gelu_inplace(hidden.data(), hidden.size());
  hidden = rounded<__half>(hidden);
  cpu::gemm_strided(c.rows, c.width, c.hidden, hidden.data(), c.hidden, fc2.data(), c.hidden, true, out.data(), c.width);
  for (std::size_t i = 0; i < n; ++i) want[i] += out[i];
  expect_close(download(d_x.data(), n), want, kTolFusedMlp, "fused_mlp");
}

TEST(FusedMlp, MatchesCpuForTheShippedAndTestWidths) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(51);
  // Widths of edgetap-large (256, hidden 1,024), edgetap-small (128, 512) and the tiny
  // test networks (32, 128); rows: one, a block less one, one more, 1,024 points + the grid.
  for (const auto& [width, hidden] : {std::pair{256, 1024}, std::pair{128, 512}, std::pair{32, 128}, std::pair{64, 64}}) {
    for (const int rows : {1, 31, 33, 1280}) {
      SCOPED_TRACE("width " + std::to_string(width) + ", hidden " + std::to_string(hidden) + ", rows " +
                   std::to_string(rows));
      check_fused_mlp({rows, width, hidden, true}, rng);
    }
  }
  SCOPED_TRACE("no pending bias");
  check_fused_mlp({100, 256, 1024, false}, rng);
}

TEST(FusedMlp, RefusesShapesItDoesNotTake) {
  EXPECT_FALSE(kc::fused_mlp_takes(48, 192));
  EXPECT_FALSE(kc::fused_mlp_takes(256, 1000));
  EXPECT_TRUE(kc::fused_mlp_takes(256, 1024));
  const kc::MlpWeights odd{nullptr, nullptr, nullptr, 96, 384};
  EXPECT_THROW(kc::fused_mlp(nullptr, nullptr, 4, nullptr, nullptr, odd, nullptr), std::invalid_argument);
  const kc::MlpWeights fine{nullptr, nullptr, nullptr, 256, 1024};
  kc::fused_mlp(nullptr, nullptr, 0, nullptr, nullptr, fine, nullptr);  // no rows: nothing launched
}

}  // namespace
}  // namespace edgetap::gpu
