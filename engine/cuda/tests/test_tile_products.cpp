// The tile products (edgetap/kernels/cuda/tile_products.hpp) against the CPU
// engine's kernels: cpu::layer_norm_rows, cpu::gemm_nt and cpu::gelu_inplace,
// with the rows and the weights rounded to half as the CUDA engine holds them in
// FP16, for every epilogue the session uses.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/tile_products.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

// max|gpu - cpu| / max|cpu|: the sums' order, and a value rounded to half (the
// normalized rows, a half output) that lands on the neighbouring half.
constexpr double kTolTileProducts = 2e-3;

// The epilogue of a case: what the product adds and where it writes.
enum class Epilogue { plain, bias_gelu_half, add_to_residual };

struct ProductCase {
  int rows, depth, outputs;
  Epilogue epilogue;
  bool pending;  // a pending bias on x (normed_product) or owed to out (half_product's add)
};

std::string name_of(const ProductCase& c) {
  const char* epilogues[] = {"plain", "bias + GELU to half", "added to the residual"};
  return std::to_string(c.rows) + " rows, depth " + std::to_string(c.depth) + ", " + std::to_string(c.outputs) +
         " outputs, " + epilogues[static_cast<int>(c.epilogue)] + (c.pending ? ", a pending bias" : "");
}

struct Operands {
  std::vector<float> weight, bias, residual_bias, out_before;
};

Operands operands_for(const ProductCase& c, std::mt19937& rng) {
  const float s = 1.f / std::sqrt(static_cast<float>(c.depth));
  Operands o;
  o.weight = rounded<__half>(random_floats(static_cast<std::size_t>(c.outputs) * c.depth, -s, s, rng));
  o.bias = random_floats(c.outputs, -0.5f, 0.5f, rng);
  o.residual_bias = random_floats(c.outputs, -1, 1, rng);
  o.out_before = random_floats(static_cast<std::size_t>(c.rows) * c.outputs, -2, 2, rng);
  return o;
}

// The CPU's result of the case's epilogue on rows `a` (already as the kernel multiplies them).
std::vector<float> reference(const ProductCase& c, const std::vector<float>& a, const Operands& o) {
  std::vector<float> want(static_cast<std::size_t>(c.rows) * c.outputs);
  switch (c.epilogue) {
    case Epilogue::plain:
      cpu::gemm_nt(c.rows, c.outputs, c.depth, a.data(), o.weight.data(), nullptr, want.data());
      return want;
    case Epilogue::bias_gelu_half:
      cpu::gemm_nt(c.rows, c.outputs, c.depth, a.data(), o.weight.data(), o.bias.data(), want.data());
      cpu::gelu_inplace(want.data(), want.size());
      return rounded<__half>(want);
    case Epilogue::add_to_residual:
      want = o.out_before;
      if (c.pending) {
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += o.residual_bias[i % static_cast<std::size_t>(c.outputs)];
      }
      cpu::gemm_nt(c.rows, c.outputs, c.depth, a.data(), o.weight.data(), o.bias.data(), want.data(), true);
      return want;
  }
  return want;
}

// Runs `launch` with the case's epilogue into fresh output buffers and checks them against `want`.
template <class Launch>
void check_epilogue(const ProductCase& c, const Operands& o, const std::vector<float>& want, Launch&& launch) {
  const std::size_t n_out = static_cast<std::size_t>(c.rows) * c.outputs;
  auto d_weight = upload<__half>(o.weight);
  auto d_bias = upload<float>(o.bias), d_residual = upload<float>(o.residual_bias);
  if (c.epilogue == Epilogue::bias_gelu_half) {
    DeviceBuffer<__half> out(n_out, testing::kLegacyStream);
    poison(out);
    launch(d_weight.data(), kc::ProductOut{.bias = d_bias.data(), .gelu = true, .out_half = out.data()});
    expect_close(download(out.data(), n_out), want, kTolTileProducts, "half output");
    return;
  }
  const bool add = c.epilogue == Epilogue::add_to_residual;
  auto out = upload<float>(o.out_before);
  if (!add) poison(out);
  launch(d_weight.data(), kc::ProductOut{.bias = add ? d_bias.data() : nullptr,
                                         .out = out.data(),
                                         .add = add,
                                         .residual_bias = add && c.pending ? d_residual.data() : nullptr});
  expect_close(download(out.data(), n_out), want, kTolTileProducts, "float output");
}

void check_normed_product(const ProductCase& c, std::mt19937& rng) {
  SCOPED_TRACE("normed_product, " + name_of(c));
  const std::size_t n = static_cast<std::size_t>(c.rows) * c.depth;
  std::vector<float> x = random_floats(n, -2, 2, rng);
  for (float& v : x) v += 3.f;  // a residual stream's mean far from 0
  const std::vector<float> pending = random_floats(c.depth, -1, 1, rng);
  const std::vector<float> gamma = random_floats(c.depth, 0.5f, 1.5f, rng), beta = random_floats(c.depth, -1, 1, rng);
  const Operands o = operands_for(c, rng);
  auto d_x = upload<float>(x);
  auto d_pending = upload<float>(pending), d_gamma = upload<float>(gamma), d_beta = upload<float>(beta);

  std::vector<float> with_pending = x, normed(n);
  if (c.pending) {
    for (std::size_t i = 0; i < n; ++i) with_pending[i] += pending[i % static_cast<std::size_t>(c.depth)];
  }
  cpu::layer_norm_rows(with_pending.data(), c.rows, c.depth, gamma.data(), beta.data(), normed.data());
  const std::vector<float> want = reference(c, rounded<__half>(normed), o);
  check_epilogue(c, o, want, [&](const __half* weight, const kc::ProductOut& out) {
    kc::normed_product(d_x.data(), c.pending ? d_pending.data() : nullptr, c.rows, c.depth, d_gamma.data(),
                       d_beta.data(), weight, c.outputs, out, nullptr);
  });
  expect_close(download(d_x.data(), n), x, 0.0, "x, only read");
}

void check_half_product(const ProductCase& c, std::mt19937& rng) {
  SCOPED_TRACE("half_product, " + name_of(c));
  const std::vector<float> a = rounded<__half>(random_floats(static_cast<std::size_t>(c.rows) * c.depth, -2, 2, rng));
  const Operands o = operands_for(c, rng);
  auto d_a = upload<__half>(a);
  check_epilogue(c, o, reference(c, a, o), [&](const __half* weight, const kc::ProductOut& out) {
    kc::half_product(d_a.data(), c.rows, c.depth, weight, c.outputs, out, nullptr);
  });
}

TEST(TileProducts, NormedProductMatchesCpuForTheSessionsProducts) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(61);
  // The qkv products of edgetap-large (256 -> 768), edgetap-small (128 -> 384) and the tiny
  // networks (32 -> 96), and the head (4 outputs: part of a tile), from x with a pending bias.
  for (const auto& [width, outputs] : {std::pair{256, 768}, std::pair{128, 384}, std::pair{32, 96}, std::pair{256, 4}}) {
    for (const int rows : {1, 33, 1280}) check_normed_product({rows, width, outputs, Epilogue::plain, true}, rng);
  }
  check_normed_product({70, 128, 384, Epilogue::plain, false}, rng);
  // fc1: the bias and GELU, written as half.
  for (const int rows : {17, 512}) check_normed_product({rows, 256, 1024, Epilogue::bias_gelu_half, false}, rng);
  check_normed_product({40, 64, 256, Epilogue::bias_gelu_half, false}, rng);
}

TEST(TileProducts, HalfProductMatchesCpuForTheSessionsProducts) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(62);
  // The projections (width -> width) and fc2 (hidden -> width) added to the residual
  // stream with their bias, and with the bias it still owes.
  for (const auto& [depth, outputs] : {std::pair{256, 256}, std::pair{1024, 256}, std::pair{128, 128},
                                       std::pair{512, 128}, std::pair{32, 32}, std::pair{64, 32}}) {
    for (const int rows : {1, 45, 1280}) {
      check_half_product({rows, depth, outputs, Epilogue::add_to_residual, true}, rng);
    }
  }
  check_half_product({300, 1024, 256, Epilogue::add_to_residual, false}, rng);
  check_half_product({100, 256, 200, Epilogue::plain, false}, rng);
  check_half_product({100, 512, 96, Epilogue::bias_gelu_half, false}, rng);
}

TEST(TileProducts, RefuseShapesTheyDoNotTake) {
  EXPECT_FALSE(kc::normed_product_takes(48, 96));
  EXPECT_FALSE(kc::normed_product_takes(512, 96));  // LayerNorm rows of 32 to 256
  EXPECT_FALSE(kc::normed_product_takes(256, 3));
  EXPECT_TRUE(kc::normed_product_takes(256, 4));
  EXPECT_FALSE(kc::half_product_takes(275, 256));  // a depth of no 32-value blocks
  EXPECT_FALSE(kc::half_product_takes(2048, 256));
  EXPECT_TRUE(kc::half_product_takes(1024, 256));
  float out = 0;
  EXPECT_THROW(kc::normed_product(nullptr, nullptr, 4, 96, nullptr, nullptr, nullptr, 288, {.out = &out}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(kc::half_product(nullptr, 4, 275, nullptr, 256, {.out = &out}, nullptr), std::invalid_argument);
  // Neither or both outputs: refused before any launch.
  EXPECT_THROW(kc::half_product(nullptr, 4, 256, nullptr, 256, {}, nullptr), std::invalid_argument);
  // No rows: nothing launched.
  kc::normed_product(nullptr, nullptr, 0, 256, nullptr, nullptr, nullptr, 768, {.out = &out}, nullptr);
}

}  // namespace
}  // namespace edgetap::gpu
