// Shared by the track-op parity tests (test_track_ops.cpp, test_sampling.cpp):
// the typed fixture over FP32 and FP16, tolerances, random inputs rounded to
// T, output poisoning and the comparison.
#pragma once

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"
#include "gpu_test_support.hpp"

namespace edgetap::gpu::track_ops_testing {

namespace kc = edgetap::kernels::cuda;
namespace cpu = edgetap::kernels::cpu;
using testing::download;
using testing::download_raw;
using testing::upload;
using testing::upload_raw;

// max|gpu - cpu| / max|cpu| per output. The references run on the inputs
// rounded to T, so what is left is arithmetic order and the output's rounding.
// FP32: float sums in another order (the correlation samples before it dots,
// the CPU dots before it weights), erff against the CPU's erf polynomial
// (< 1.5e-7), expf: a few ulps of the largest value.
constexpr double kTolF32 = 1e-5;
// FP16: the output rounded to half (relative 2^-11 ~ 4.9e-4) plus, for
// attention, this frame's keys and values rounded to half in the cache.
constexpr double kTolF16 = 1e-2;

template <class T>
constexpr double tolerance() {
  return testing::for_precision<T>(kTolF32, kTolF16);
}

template <class T>
class TrackOps : public ::testing::Test {};
using Precisions = ::testing::Types<float, __half>;
struct PrecisionName {
  template <class T>
  static std::string GetName(int) {
    return testing::precision_name<T>();
  }
};
TYPED_TEST_SUITE(TrackOps, Precisions, PrecisionName);

inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

inline std::vector<float> random_floats(std::size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The values as T holds them (what the kernel reads), back as floats.
template <class T>
std::vector<float> rounded(std::vector<float> v) {
  for (float& x : v) x = testing::to_float(testing::from_float<T>(x));
  return v;
}

// All bits set: NaN in float and in half.
template <class U>
void poison(DeviceBuffer<U>& buffer) {
  EDGETAP_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
}

inline std::vector<float> flatten(const std::vector<float2>& v) {
  std::vector<float> out;
  for (const float2& p : v) out.insert(out.end(), {p.x, p.y});
  return out;
}
inline std::vector<float> flatten(const std::vector<float4>& v) {
  std::vector<float> out;
  for (const float4& p : v) out.insert(out.end(), {p.x, p.y, p.z, p.w});
  return out;
}

// Where `want` is NaN the kernel must not have written (got is still NaN);
// elsewhere got must be written and max|got - want| <= tol * max|want|.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, worst = 0;
  std::size_t worst_at = 0;
  for (float w : want) {
    if (!std::isnan(w)) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << ": wrote " << got[i] << " at " << i << ", which it must not touch";
      continue;
    }
    ASSERT_FALSE(std::isnan(got[i])) << what << ": value " << i << " not written (reference " << want[i] << ")";
    const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (diff > worst) {
      worst = diff;
      worst_at = i;
    }
  }
  const double error = worst / std::max(scale, 1e-30);
  EXPECT_LE(error, tol) << what << ": max|diff| " << worst << " at " << worst_at << " (gpu " << got[worst_at]
                        << ", cpu " << want[worst_at] << "), max|ref| " << scale;
}

// Slots of the stepped rows: not contiguous, not in order, leaving gaps.
inline const std::vector<int> kSlots = {5, 0, 3, 7, 2, 9, 4};
constexpr int kCapacity = 11;

}  // namespace edgetap::gpu::track_ops_testing
