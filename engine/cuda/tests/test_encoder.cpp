// CudaEncoder against engine::CpuEncoder: every pyramid level of random
// frames, square and not, for the tiny test networks (one with the stride-2
// level) and the shipped models, in FP32 and FP16; plus buffer reuse across
// frames and across frame sizes.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "edgetap/engine/encoder.hpp"
#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/gpu/cuda_encoder.hpp"
#include "gpu_test_support.hpp"

namespace edgetap::gpu {
namespace {

using testing::download;

// max|gpu - cpu| / max|cpu| per level.
// FP32: cuDNN's FMA kernels (never TF32) sum in another order than the CPU's
// GEMM, and Winograd/FFT algorithms round their transforms: expected some
// 1e-6..1e-5 after ten layers, so 1e-4 only catches real mistakes.
constexpr double kFp32Tolerance = 1e-4;
// FP16: storage in half (11-bit significand, relative rounding 2^-11 ~ 4.9e-4)
// of the input, the weights and every activation, float accumulation. A CPU
// emulation of exactly this rounding (half input, weights, conv outputs and
// epilogue outputs; float sums) gives 0.9e-3 to 2.4e-3 on every level of the
// eight cases below. 2e-2 leaves room for cuDNN's own choices (a Winograd or
// FFT algorithm rounds its transforms too) yet fails a wrong tap, channel or
// bias, which costs O(1e-1). Each level's measured error is printed.
constexpr double kFp16Tolerance = 2e-2;

template <class T>
constexpr double tolerance() {
  return testing::for_precision<T>(kFp32Tolerance, kFp16Tolerance);
}
using testing::precision_name;

const engine::Network& network(const std::string& stem) {
  static std::map<std::string, engine::Network> loaded;
  auto it = loaded.find(stem);
  if (it == loaded.end()) {
    const std::string base = testing::source_path(stem);
    it = loaded.emplace(stem, engine::load_network(base + ".safetensors", base + ".json")).first;
  }
  return it->second;
}

std::vector<std::uint8_t> random_frame(int height, int width, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(height) * width * 3);
  for (auto& v : rgb) v = static_cast<std::uint8_t>(byte(rng));
  return rgb;
}

engine::Pyramid cpu_pyramid(const engine::Network& net, const std::vector<std::uint8_t>& rgb, int height, int width) {
  engine::CpuEncoder encoder(net.config, net.weights);
  engine::Pyramid out;
  encoder.encode(ImageView{rgb.data(), width, height, static_cast<std::size_t>(width) * 3}, out);
  return out;
}

class Stream {
 public:
  Stream() { EDGETAP_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Sets every value of every level to all-ones bits (NaN in float and half):
// a cell the next encode leaves unwritten fails the comparison.
template <class T>
void poison(const kernels::cuda::PyramidView<T>& view) {
  for (int l = 0; l < view.levels; ++l) {
    const std::size_t n = static_cast<std::size_t>(view.height[l]) * view.width[l] * view.channels;
    EDGETAP_CUDA_CHECK(cudaMemset(const_cast<T*>(view.level[l]), 0xFF, n * sizeof(T)));
  }
}

// Compares every level; on failure names the input and the worst cell.
template <class T>
void expect_matches(const kernels::cuda::PyramidView<T>& got, const engine::Pyramid& ref,
                    const engine::ModelConfig& config, const std::string& what) {
  ASSERT_EQ(got.levels, static_cast<int>(ref.levels.size())) << what;
  ASSERT_EQ(got.channels, config.feat_dim) << what;
  for (int l = 0; l < got.levels; ++l) {
    const engine::FeatureMap& r = ref.levels[static_cast<std::size_t>(l)];
    ASSERT_EQ(got.height[l], r.height) << what << " level " << l;
    ASSERT_EQ(got.width[l], r.width) << what << " level " << l;
    EXPECT_EQ(got.stride[l], static_cast<float>(config.strides[static_cast<std::size_t>(l)])) << what;
    const std::vector<float> g = download(got.level[l], r.data.size());
    double max_ref = 0, max_diff = -1;  // a poisoned (NaN) cell counts as an infinite difference
    std::size_t worst = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      max_ref = std::max(max_ref, static_cast<double>(std::fabs(r.data[i])));
      const double diff = std::isfinite(g[i]) ? std::fabs(static_cast<double>(g[i]) - r.data[i]) : INFINITY;
      if (diff > max_diff) {
        max_diff = diff;
        worst = i;
      }
    }
    const double rel = max_diff / std::max(max_ref, 1e-30);
    const std::size_t pixel = worst / static_cast<std::size_t>(r.channels);
    // Printed on success too: the FP16 numbers are how its tolerance was chosen.
    std::printf("  %s level %d (%dx%d): max|diff| %.3g, max|ref| %.3g, relative %.3g\n", what.c_str(), l, r.width,
                r.height, max_diff, max_ref, rel);
    EXPECT_LE(rel, tolerance<T>()) << what << " level " << l << " (stride " << got.stride[l]
                                   << "): worst cell y " << pixel / static_cast<std::size_t>(r.width) << " x "
                                   << pixel % static_cast<std::size_t>(r.width) << " c " << worst % r.channels
                                   << ": gpu " << g[worst] << " cpu " << r.data[worst];
  }
}

// Encodes `rgb` on `encoder` twice, poisoning the pyramid between the two, and
// checks the second result against the CPU encoder.
template <class T>
void expect_parity(CudaEncoder<T>& encoder, const engine::Network& net, const std::vector<std::uint8_t>& rgb,
                   int height, int width, cudaStream_t stream, const std::string& what) {
  DeviceBuffer<std::uint8_t> frame(rgb.size(), stream);
  EDGETAP_CUDA_CHECK(cudaMemcpy(frame.data(), rgb.data(), rgb.size(), cudaMemcpyHostToDevice));
  const kernels::cuda::PyramidView<T> first = encoder.encode(frame.data(), height, width);
  EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream));
  poison(first);
  const kernels::cuda::PyramidView<T> view = encoder.encode(frame.data(), height, width);
  EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream));
  expect_matches(view, cpu_pyramid(net, rgb, height, width), net.config, what);
}

struct Case {
  const char* stem;  // relative to the source tree, without extension
  int height, width;
};

std::string describe(const Case& c, const char* precision, std::uint32_t seed) {
  return std::string(c.stem) + " " + std::to_string(c.width) + "x" + std::to_string(c.height) + " " + precision +
         " seed " + std::to_string(seed);
}

class EncoderParity : public ::testing::TestWithParam<Case> {
 protected:
  template <class T>
  void run() {
    EDGETAP_REQUIRE_GPU();
    const Case& c = GetParam();
    const engine::Network& net = network(c.stem);
    const std::uint32_t seed = static_cast<std::uint32_t>(c.height * 1000 + c.width);
    Stream stream;
    CudaEncoder<T> encoder(net.config, net.weights, stream.get());
    expect_parity(encoder, net, random_frame(c.height, c.width, seed), c.height, c.width, stream.get(),
                  describe(c, precision_name<T>(), seed));
  }
};

TEST_P(EncoderParity, Fp32) { run<float>(); }
TEST_P(EncoderParity, Fp16) { run<__half>(); }

INSTANTIATE_TEST_SUITE_P(
    Networks, EncoderParity,
    ::testing::Values(Case{"tests/data/golden/edgetap-tiny-qp3", 96, 160},
                      Case{"tests/data/golden/edgetap-tiny-qp3", 64, 64},
                      Case{"tests/data/golden/edgetap-tiny-fine", 96, 160},
                      Case{"tests/data/golden/edgetap-tiny-fine", 128, 96},
                      Case{"models/edgetap-small", 256, 256}, Case{"models/edgetap-small", 224, 320},
                      Case{"models/edgetap-large", 256, 256}, Case{"models/edgetap-large", 224, 320}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = std::string(info.param.stem);
      name = name.substr(name.rfind('/') + 1) + "_" + std::to_string(info.param.height) + "x" +
             std::to_string(info.param.width);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

// Two different frames of one size in a row: the second's pyramid, nothing
// left over from the first (the buffers are reused).
template <class T>
void check_consecutive_frames() {
  const Case c{"tests/data/golden/edgetap-tiny-fine", 96, 160};
  const engine::Network& net = network(c.stem);
  Stream stream;
  CudaEncoder<T> encoder(net.config, net.weights, stream.get());
  for (std::uint32_t seed : {11u, 12u}) {
    expect_parity(encoder, net, random_frame(c.height, c.width, seed), c.height, c.width, stream.get(),
                  describe(c, precision_name<T>(), seed));
  }
}

TEST(CudaEncoder, ConsecutiveFramesFp32) {
  EDGETAP_REQUIRE_GPU();
  check_consecutive_frames<float>();
}

TEST(CudaEncoder, ConsecutiveFramesFp16) {
  EDGETAP_REQUIRE_GPU();
  check_consecutive_frames<__half>();
}

// A new frame size after another (smaller, then larger than the first, then
// the first again): each prepares its own program and gives its own result.
TEST(CudaEncoder, FrameSizeChanges) {
  EDGETAP_REQUIRE_GPU();
  const char* stem = "tests/data/golden/edgetap-tiny-fine";
  const engine::Network& net = network(stem);
  Stream stream;
  CudaEncoder<float> encoder(net.config, net.weights, stream.get());
  const Case sizes[] = {{stem, 96, 160}, {stem, 64, 64}, {stem, 160, 224}, {stem, 96, 160}};
  std::uint32_t seed = 21;
  for (const Case& c : sizes) {
    expect_parity(encoder, net, random_frame(c.height, c.width, seed), c.height, c.width, stream.get(),
                  describe(c, "fp32", seed));
    ++seed;
  }
}

// A batch of frames through encode_batch (fewer than the batch prepared), each
// taken back by take_batched with its index in device memory: every frame's
// pyramid as the CPU encoder's, the stride-2 level and the top-down sums
// (which must not mix neighbouring frames) included.
template <class T>
void check_batch() {
  constexpr int kHeight = 96, kWidth = 160, kPrepared = 4, kFrames = 3;
  for (const char* stem : {"tests/data/golden/edgetap-tiny-fine", "models/edgetap-large"}) {
    const engine::Network& net = network(stem);
    Stream stream;
    CudaEncoder<T> encoder(net.config, net.weights, stream.get());
    encoder.prepare(kHeight, kWidth);
    encoder.prepare_batch(kHeight, kWidth, kPrepared);
    std::vector<std::vector<std::uint8_t>> frames;
    std::vector<std::uint8_t> batch;
    for (std::uint32_t f = 0; f < kFrames; ++f) {
      frames.push_back(random_frame(kHeight, kWidth, 31 + f));
      batch.insert(batch.end(), frames.back().begin(), frames.back().end());
    }
    DeviceBuffer<std::uint8_t> rgb(batch.size(), stream.get());
    DeviceBuffer<int> index(1, stream.get());
    EDGETAP_CUDA_CHECK(cudaMemcpy(rgb.data(), batch.data(), batch.size(), cudaMemcpyHostToDevice));
    encoder.encode_batch(rgb.data(), kFrames, kHeight, kWidth);
    EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    for (int f = kFrames - 1; f >= 0; --f) {  // out of order: each copy takes the index it is given
      EDGETAP_CUDA_CHECK(cudaMemcpy(index.data(), &f, sizeof(int), cudaMemcpyHostToDevice));
      const kernels::cuda::PyramidView<T> view = encoder.take_batched(index.data());
      EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      expect_matches(view, cpu_pyramid(net, frames[static_cast<std::size_t>(f)], kHeight, kWidth), net.config,
                     std::string(stem) + " " + precision_name<T>() + " batch frame " + std::to_string(f));
      poison(view);  // the next copy must overwrite every cell
    }
  }
}

TEST(CudaEncoder, BatchFp32) {
  EDGETAP_REQUIRE_GPU();
  check_batch<float>();
}

TEST(CudaEncoder, BatchFp16) {
  EDGETAP_REQUIRE_GPU();
  check_batch<__half>();
}

}  // namespace
}  // namespace edgetap::gpu
