// The pyramid sampling kernels (sample_descriptors, window_correlation)
// against cpu::bilinear_sample_hwc and cpu::window_correlation_hwc, on random
// pyramids, with points inside, near every border and far outside.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "edgetap/engine/model_config.hpp"
#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

// ---- A random pyramid (levels of image / stride) on host (rounded to T) and device.

template <class T>
struct Pyramid {
  std::vector<std::vector<float>> host;
  std::vector<DeviceBuffer<T>> device;
  std::vector<int> height, width, stride;
  int channels = 0;
  kc::PyramidView<T> view;
};

template <class T>
Pyramid<T> make_pyramid(int image_h, int image_w, const std::vector<int>& strides, int channels, std::mt19937& rng) {
  Pyramid<T> p;
  p.channels = channels;
  p.stride = strides;
  for (int s : strides) {
    p.height.push_back(image_h / s);
    p.width.push_back(image_w / s);
    p.host.push_back(rounded<T>(random_floats(static_cast<std::size_t>(image_h / s) * (image_w / s) * channels, -1, 1, rng)));
    p.device.push_back(upload<T>(p.host.back()));
  }
  p.view.levels = static_cast<int>(strides.size());
  p.view.channels = channels;
  for (int l = 0; l < p.view.levels; ++l) {
    p.view.level[l] = p.device[l].data();
    p.view.height[l] = p.height[l];
    p.view.width[l] = p.width[l];
    p.view.stride[l] = static_cast<float>(strides[l]);
  }
  return p;
}

// Points inside, near every border (zero padding), on exact cell centres
// (zero-weight neighbours), and far outside (all zero).
std::vector<float2> test_points(int S, int image_h, int image_w, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float2> points(S);
  for (int i = 0; i < S; ++i) {
    const float near = 12 * u(rng) - 6;
    switch (i % 6) {
      case 0: points[i] = {u(rng) * image_w, u(rng) * image_h}; break;
      case 1: points[i] = {near, u(rng) * image_h}; break;
      case 2: points[i] = {u(rng) * image_w, image_h + near}; break;
      case 3: points[i] = {image_w + near, near}; break;
      case 4: points[i] = {32.f * static_cast<float>(i % 3), 64.f}; break;
      default: points[i] = {-200.f - 100 * u(rng), image_h + 150.f}; break;
    }
  }
  return points;
}

// ---- sample_descriptors and window_correlation

struct SamplingCase {
  int channels;
  std::vector<int> strides;
  int query_patch, radius, sets;
  bool cross_scale = false;
};

// The reads of a model of the case's shape (engine::ModelConfig::correlation_reads).
std::vector<kernels::CorrelationRead> reads_of(const SamplingCase& c) {
  engine::ModelConfig m;
  m.strides = c.strides;
  m.recent_descriptors = c.sets == 2;
  m.cross_scale = c.cross_scale;
  return m.correlation_reads();
}

std::string describe(const SamplingCase& c) {
  std::ostringstream os;
  os << "channels " << c.channels << ", levels " << c.strides.size() << ", query_patch " << c.query_patch
     << ", radius " << c.radius << ", sets " << c.sets << (c.cross_scale ? ", cross-scale" : "");
  return os.str();
}

// The model shapes (64 channels, 4-5 levels, 3x3 query patch, radius 3, two
// sets, cross-scale reads: up to 4 reads and 36 descriptors per window), a tiny
// net's (32 channels, radius 2), and 12 channels (no 16-byte access: the
// scalar path).
const std::vector<SamplingCase> kSamplingCases = {
    {64, {4, 8, 16, 32}, 3, 3, 2},
    {64, {2, 4, 8, 16, 32}, 3, 3, 1},
    {64, {4, 8, 16, 32}, 3, 3, 1, true},
    {64, {4, 8, 16, 32}, 3, 3, 2, true},
    {32, {4, 8, 16, 32}, 1, 2, 2},
    {12, {4, 8}, 3, 2, 2},
    {12, {4, 8, 16}, 3, 2, 1, true},
};
constexpr int kImageH = 128, kImageW = 192;

TYPED_TEST(TrackOps, SampleDescriptorsMatchesBilinearSample) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(11);
  for (const SamplingCase& c : kSamplingCases) {
    SCOPED_TRACE(describe(c));
    const Pyramid<T> pyr = make_pyramid<T>(kImageH, kImageW, c.strides, c.channels, rng);
    const int S = static_cast<int>(kSlots.size()), L = pyr.view.levels, qc = c.query_patch * c.query_patch;
    const std::size_t per_track = static_cast<std::size_t>(L) * qc * c.channels, slot_stride = per_track + 8;
    const std::vector<float2> points = test_points(S, kImageH, kImageW, rng);
    auto d_slots = upload_raw(kSlots);
    auto d_points = upload_raw(points);
    DeviceBuffer<T> descs(kCapacity * slot_stride, testing::kLegacyStream);
    poison(descs);
    kc::sample_descriptors(pyr.view, d_slots.data(), d_points.data(), S, c.query_patch, descs.data(), slot_stride,
                           nullptr);

    // engine::StreamingSession::sample_descriptors, into each row's slot.
    std::vector<float> want(kCapacity * slot_stride, kNaN);
    const int half = c.query_patch / 2;
    for (int i = 0; i < S; ++i) {
      float* out = want.data() + kSlots[i] * slot_stride;
      for (int l = 0; l < L; ++l) {
        const float s = static_cast<float>(c.strides[l]);
        for (int j = 0; j < qc; ++j) {
          const float dx = static_cast<float>(j % c.query_patch - half), dy = static_cast<float>(j / c.query_patch - half);
          cpu::bilinear_sample_hwc(pyr.host[l].data(), pyr.height[l], pyr.width[l], c.channels, points[i].x / s + dx,
                                   points[i].y / s + dy, out + (static_cast<std::size_t>(l) * qc + j) * c.channels);
        }
      }
    }
    expect_close(download(descs.data(), descs.size()), want, tolerance<T>(), "descriptors");
  }
}

// `correlate` (window_correlation's parameters) on every case against the CPU's correlation.
template <class T, class Correlate>
void expect_correlation_matches_cpu(Correlate correlate) {
  std::mt19937 rng(12);
  for (const SamplingCase& c : kSamplingCases) {
    SCOPED_TRACE(describe(c));
    const Pyramid<T> pyr = make_pyramid<T>(kImageH, kImageW, c.strides, c.channels, rng);
    const int S = static_cast<int>(kSlots.size()), L = pyr.view.levels, qc = c.query_patch * c.query_patch;
    const std::vector<kernels::CorrelationRead> reads = reads_of(c);
    const int wc = (2 * c.radius + 1) * (2 * c.radius + 1), n_corr = static_cast<int>(reads.size()) * qc * wc;
    // As the session: every slot's first set, then every slot's second.
    const std::size_t slot_stride = static_cast<std::size_t>(L) * qc * c.channels, set_stride = kCapacity * slot_stride;
    const std::vector<float> descs = rounded<T>(random_floats(c.sets * set_stride, -1, 1, rng));
    const std::vector<float2> points = test_points(S, kImageH, kImageW, rng);
    auto d_slots = upload_raw(kSlots);
    auto d_points = upload_raw(points);
    auto d_descs = upload<T>(descs);
    DeviceBuffer<T> corr(static_cast<std::size_t>(S) * n_corr, testing::kLegacyStream);
    poison(corr);
    correlate(pyr.view, d_slots.data(), d_points.data(), S, c.radius, d_descs.data(), slot_stride, set_stride,
              reads.data(), static_cast<int>(reads.size()), c.query_patch, corr.data(), nullptr);

    // engine::StreamingSession::step's correlation loop.
    std::vector<float> want(corr.size());
    for (int i = 0; i < S; ++i) {
      float* out = want.data() + static_cast<std::size_t>(i) * n_corr;
      for (const kernels::CorrelationRead& read : reads) {
        const float* row_descs = descs.data() + read.set * set_stride + kSlots[i] * slot_stride;
        const int l = read.window_level;
        const float s = static_cast<float>(c.strides[l]);
        cpu::window_correlation_hwc(pyr.host[l].data(), pyr.height[l], pyr.width[l], c.channels, points[i].x / s,
                                    points[i].y / s, c.radius,
                                    row_descs + static_cast<std::size_t>(read.descriptor_level) * qc * c.channels, qc, out);
        out += static_cast<std::size_t>(qc) * wc;
      }
    }
    expect_close(download(corr.data(), corr.size()), want, tolerance<T>(), "correlation");
  }
}

TYPED_TEST(TrackOps, WindowCorrelationMatchesCpu) {
  EDGETAP_REQUIRE_GPU();
  expect_correlation_matches_cpu<TypeParam>([](auto&&... args) { kc::window_correlation(args...); });
}

// The tensor-core form, FP16: within FP16's tolerance on the cases it takes (64
// channels, up to 27 descriptors a window) and on those it hands back (32 and 12 channels).
TEST(TrackOpsFp16, WindowCorrelationOnTensorCoresMatchesCpu) {
  EDGETAP_REQUIRE_GPU();
  expect_correlation_matches_cpu<__half>([](auto&&... args) { kc::window_correlation_tensor_cores(args...); });
}

}  // namespace
}  // namespace edgetap::gpu
