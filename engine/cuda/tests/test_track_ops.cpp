// The tracker's CUDA kernels (edgetap/kernels/cuda/track_ops.hpp) against
// their CPU twins: the cpu:: kernels, or a host loop that follows
// engine::StreamingSession::step (and attention_bias) line by line. Fresh
// random inputs from fixed seeds, FP32 and FP16; every output buffer is
// poisoned with NaN first, so a value the kernel did not write fails, and
// values it must not touch (other slots, padding) must still be NaN after.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "edgetap/kernels/cpu.hpp"
#include "edgetap/kernels/cuda/track_ops.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

// ---- Row-wise and element-wise kernels

TYPED_TEST(TrackOps, BiasActivationMatchesGelu) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(13);
  const int rows = 37, n = 200;
  const std::vector<float> acc = random_floats(static_cast<std::size_t>(rows) * n, -6, 6, rng);
  const std::vector<float> bias = random_floats(n, -1, 1, rng);
  auto d_acc = upload<float>(acc);
  auto d_bias = upload<float>(bias);
  for (const bool gelu : {true, false}) {
    SCOPED_TRACE(gelu ? "gelu" : "identity");
    DeviceBuffer<T> out(acc.size(), testing::kLegacyStream);
    poison(out);
    kc::bias_activation(d_acc.data(), d_bias.data(), rows, n, gelu, out.data(), nullptr);
    std::vector<float> want(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) want[i] = acc[i] + bias[i % n];
    if (gelu) cpu::gelu_inplace(want.data(), want.size());
    expect_close(download(out.data(), out.size()), want, tolerance<T>(), "bias_activation");
  }
}

TEST(TrackOpsFp32, BroadcastRowCopiesTheRow) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(15);
  const int rows = 23, n = 96;
  const std::vector<float> row = random_floats(n, -1, 1, rng);
  auto d_row = upload<float>(row);
  DeviceBuffer<float> x(static_cast<std::size_t>(rows) * n, testing::kLegacyStream);
  poison(x);
  kc::broadcast_row(d_row.data(), rows, n, x.data(), nullptr);
  std::vector<float> want;
  for (int r = 0; r < rows; ++r) want.insert(want.end(), row.begin(), row.end());
  expect_close(download(x.data(), x.size()), want, 0.0, "broadcast_row");
}

TYPED_TEST(TrackOps, LayerNormMatchesCpu) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(16);
  // Widths of 128, 256, 512 and 1,024 take the kernel that holds a row in registers;
  // the others (384: three of its chunks) the one that walks the row's columns.
  for (const int width : {256, 128, 1024, 384, 48, 20}) {
    SCOPED_TRACE("width " + std::to_string(width));
    const int rows = 67;
    std::vector<float> x = random_floats(static_cast<std::size_t>(rows) * width, -2, 2, rng);
    for (float& v : x) v += 3.f;  // a mean far from 0, as a residual stream's
    const std::vector<float> gamma = random_floats(width, 0.5f, 1.5f, rng), beta = random_floats(width, -1, 1, rng);
    const std::vector<float> pending = random_floats(width, -1, 1, rng);
    auto d_gamma = upload<float>(gamma);
    auto d_beta = upload<float>(beta);
    auto d_pending = upload<float>(pending);
    for (const bool with_bias : {false, true}) {
      SCOPED_TRACE(with_bias ? "pending bias" : "no pending bias");
      auto d_x = upload<float>(x);
      DeviceBuffer<T> out(x.size(), testing::kLegacyStream);
      poison(out);
      kc::layer_norm_rows(d_x.data(), with_bias ? d_pending.data() : nullptr, rows, width, d_gamma.data(),
                          d_beta.data(), out.data(), nullptr);
      // x with the pending bias added (the same float sum on both sides), or untouched.
      std::vector<float> want_x = x;
      for (std::size_t i = 0; i < want_x.size() && with_bias; ++i) want_x[i] += pending[i % width];
      std::vector<float> want(x.size());
      cpu::layer_norm_rows(want_x.data(), rows, width, gamma.data(), beta.data(), want.data());
      expect_close(download(out.data(), out.size()), want, tolerance<T>(), "layer_norm_rows");
      expect_close(download(d_x.data(), x.size()), want_x, 0.0, "x after layer_norm_rows");
    }
  }
}

TYPED_TEST(TrackOps, TokenInputsMatchSession) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(17);
  const int S = static_cast<int>(kSlots.size()), corr_hidden = 64, n_freq = 4, ti = corr_hidden + 3 + 4 * n_freq;
  const float disp_scale = 64.f;
  const std::vector<float> hidden = random_floats(static_cast<std::size_t>(S) * corr_hidden, -3, 3, rng);
  const std::vector<float> bias = random_floats(corr_hidden, -1, 1, rng);
  std::vector<float2> points(S), query(kCapacity, float2{kNaN, kNaN});
  std::uniform_real_distribution<float> u(-100, 400), step(-80, 80);
  for (int i = 0; i < S; ++i) {
    query[kSlots[i]] = {u(rng), u(rng)};
    points[i] = {query[kSlots[i]].x + step(rng), query[kSlots[i]].y + step(rng)};
  }
  auto d_hidden = upload<float>(hidden);
  auto d_bias = upload<float>(bias);
  auto d_points = upload_raw(points);
  auto d_query = upload_raw(query);
  auto d_slots = upload_raw(kSlots);
  for (const bool query_step : {false, true}) {
    SCOPED_TRACE(query_step ? "query step" : "tracking step");
    DeviceBuffer<T> token(static_cast<std::size_t>(S) * ti, testing::kLegacyStream);
    poison(token);
    kc::token_inputs(d_hidden.data(), d_bias.data(), corr_hidden, d_points.data(), d_query.data(), d_slots.data(), S,
                     disp_scale, n_freq, query_step, token.data(), nullptr);
    // engine::StreamingSession::step's token loop (the correlation MLP's output with its bias).
    std::vector<float> want(token.size());
    for (int i = 0; i < S; ++i) {
      float* tok = want.data() + static_cast<std::size_t>(i) * ti;
      for (int c = 0; c < corr_hidden; ++c) tok[c] = hidden[static_cast<std::size_t>(i) * corr_hidden + c] + bias[c];
      float* enc = tok + corr_hidden;
      const float2 q = query[kSlots[i]];
      const float dx = (points[i].x - q.x) / disp_scale, dy = (points[i].y - q.y) / disp_scale;
      enc[0] = dx;
      enc[1] = dy;
      for (int f = 0; f < n_freq; ++f) {
        const float a = std::numbers::pi_v<float> * std::ldexp(1.f, f);
        enc[2 + 4 * f + 0] = std::sin(dx * a);
        enc[2 + 4 * f + 1] = std::sin(dy * a);
        enc[2 + 4 * f + 2] = std::cos(dx * a);
        enc[2 + 4 * f + 3] = std::cos(dy * a);
      }
      enc[2 + 4 * n_freq] = query_step ? 1.f : 0.f;
    }
    expect_close(download(token.data(), token.size()), want, tolerance<T>(), "token_inputs");
  }
}

// ---- attend_cached

struct AttendCase {
  std::string name;
  std::int64_t t;
  std::vector<std::int64_t> slot_frame;   // window entries, -1 = not filled yet
  std::vector<std::int64_t> query_frame;  // per stepped row
  bool query_step;
};

// Window 8. Early in a video (slots not filled yet, query frames after some
// slots, no anchor yet); later (slots older than a track's query frame left
// out, the anchor in once t - query_frame >= 8, exactly 8 for one); query
// steps (only the current slot; the anchor written, not attended).
std::vector<AttendCase> attend_cases() {
  std::vector<std::int64_t> late(8);
  for (std::int64_t f = 13; f <= 20; ++f) late[static_cast<std::size_t>(f % 8)] = f;
  return {
      {"early", 5, {0, 1, 2, 3, 4, 5, -1, -1}, {0, 3, 5, 1, 2, 0, 4}, false},
      {"late", 20, late, {2, 12, 16, 20, 13, 0, 19}, false},
      {"query step late", 20, late, {20, 20, 20, 20, 20, 20, 20}, true},
      {"query step early", 3, {0, 1, 2, 3, -1, -1, -1, -1}, {3, 3, 3, 3, 3, 3, 3}, true},
  };
}

template <class T>
void check_attend(const AttendCase& c, int heads, int dh, std::mt19937& rng) {
  const int W = 8, S = static_cast<int>(kSlots.size()), width = heads * dh;
  // Two layers of cache per slot; the kernel works on the second.
  const std::size_t layer = static_cast<std::size_t>(heads) * (W + 1) * dh, slot_stride = 2 * layer;
  const std::size_t layer_offset = layer;
  const std::vector<float> qkv = random_floats(static_cast<std::size_t>(S) * 3 * width, -2, 2, rng);
  const std::vector<float> qkv_bias = random_floats(static_cast<std::size_t>(3) * width, -1, 1, rng);
  const std::vector<float> rel_bias = random_floats(static_cast<std::size_t>(heads) * (W + 1), -1, 1, rng);
  // Earlier frames' keys and values; unfilled slots hold values that must not count.
  std::vector<float> keys = rounded<T>(random_floats(kCapacity * slot_stride, -2, 2, rng));
  std::vector<float> values = rounded<T>(random_floats(kCapacity * slot_stride, -2, 2, rng));
  std::vector<std::int64_t> query_frame(kCapacity, 1000);  // slots not stepped: never read
  for (int i = 0; i < S; ++i) query_frame[kSlots[i]] = c.query_frame[i];
  kc::FrameClock clock;
  clock.t = c.t;
  std::copy(c.slot_frame.begin(), c.slot_frame.end(), clock.slot_frame);

  auto d_qkv = upload<float>(qkv);
  auto d_qkv_bias = upload<float>(qkv_bias);
  auto d_rel = upload<float>(rel_bias);
  auto d_keys = upload<T>(keys);
  auto d_values = upload<T>(values);
  auto d_slots = upload_raw(kSlots);
  auto d_query_frame = upload_raw(query_frame);
  auto d_clock = upload_raw(std::vector<kc::FrameClock>{clock});
  DeviceBuffer<T> out(static_cast<std::size_t>(S) * width, testing::kLegacyStream);
  poison(out);
  kc::attend_cached(d_qkv.data(), d_qkv_bias.data(), d_slots.data(), S, heads, dh, W, c.query_step, d_keys.data(),
                    d_values.data(), slot_stride, layer_offset, d_rel.data(), d_query_frame.data(), d_clock.data(),
                    out.data(), nullptr);

  // engine::StreamingSession::step's attention loop with attention_bias, on
  // qkv with its bias added (the CPU's linear includes it); this frame's k and
  // v as the cache of T holds them.
  std::vector<float> qkv_biased = qkv;
  for (std::size_t j = 0; j < qkv_biased.size(); ++j) qkv_biased[j] += qkv_bias[j % (3 * width)];
  const int current = static_cast<int>(c.t % W);
  const float scale = 1.f / std::sqrt(static_cast<float>(dh)), none = -std::numeric_limits<float>::infinity();
  std::vector<float> want(out.size());
  for (int i = 0; i < S; ++i) {
    const std::int64_t qf = c.query_frame[i];
    const float* q = qkv_biased.data() + static_cast<std::size_t>(i) * 3 * width;
    for (int h = 0; h < heads; ++h) {
      const float* rel = rel_bias.data() + static_cast<std::size_t>(h) * (W + 1);
      std::vector<float> bias(W + 1, none);
      for (int j = 0; j < W; ++j) {
        const std::int64_t sf = c.slot_frame[j];
        if (sf < 0 || sf < qf) continue;
        bias[j] = rel[std::clamp<std::int64_t>(c.t - sf, 0, W)];
      }
      if (c.t - qf >= W) bias[W] = rel[W];
      const std::size_t at = kSlots[i] * slot_stride + layer_offset + h * (W + 1) * dh;
      const float* k = q + width + h * dh;
      const float* v = q + 2 * width + h * dh;
      const std::vector<float> k_new = rounded<T>(std::vector<float>(k, k + dh));
      const std::vector<float> v_new = rounded<T>(std::vector<float>(v, v + dh));
      for (const int slot : c.query_step ? std::vector<int>{current, W} : std::vector<int>{current}) {
        std::copy(k_new.begin(), k_new.end(), keys.begin() + at + slot * dh);
        std::copy(v_new.begin(), v_new.end(), values.begin() + at + slot * dh);
      }
      cpu::attend_cached(q + h * dh, keys.data() + at, values.data() + at, bias.data(), W + 1, dh, scale,
                         want.data() + static_cast<std::size_t>(i) * width + h * dh);
    }
  }
  expect_close(download(out.data(), out.size()), want, tolerance<T>(), "attended");
  expect_close(download(d_keys.data(), keys.size()), keys, 0.0, "key cache");
  expect_close(download(d_values.data(), values.size()), values, 0.0, "value cache");
}

TYPED_TEST(TrackOps, AttendCachedMatchesCpu) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(18);
  for (const AttendCase& c : attend_cases()) {
    for (const auto& [heads, dh] : {std::pair{8, 32}, std::pair{4, 16}, std::pair{2, 64}, std::pair{3, 8}}) {
      SCOPED_TRACE(c.name + ", heads " + std::to_string(heads) + ", head_dim " + std::to_string(dh));
      check_attend<TypeParam>(c, heads, dh, rng);
    }
  }
}

// ---- The cross-track layer's pieces

TYPED_TEST(TrackOps, SoftmaxRowsMatchesCpu) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(20);
  const float scale = 1.f / std::sqrt(32.f);
  // Rows shorter than a block, longer, and longer than the shared-memory cache.
  for (const auto& [rows, cols] : {std::pair{5, 7}, std::pair{9, 300}, std::pair{3, 9000}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(cols));
    const std::vector<float> scores = random_floats(static_cast<std::size_t>(rows) * cols, -20, 20, rng);
    auto d_scores = upload<float>(scores);
    DeviceBuffer<T> probs(scores.size(), testing::kLegacyStream);
    poison(probs);
    kc::softmax_rows(d_scores.data(), rows, cols, scale, probs.data(), nullptr);
    std::vector<float> want = scores;
    cpu::softmax_rows(want.data(), rows, cols, scale);
    expect_close(download(probs.data(), probs.size()), want, tolerance<T>(), "softmax_rows");
  }
}

TYPED_TEST(TrackOps, TakeValuesAddsBiasToTheValueColumns) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(21);
  const int rows = 13, width = 40;
  const std::vector<float> qkv = random_floats(static_cast<std::size_t>(rows) * 3 * width, -3, 3, rng);
  const std::vector<float> bias = random_floats(static_cast<std::size_t>(3) * width, -1, 1, rng);
  auto d_qkv = upload<float>(qkv);
  auto d_bias = upload<float>(bias);
  DeviceBuffer<T> out(static_cast<std::size_t>(rows) * width, testing::kLegacyStream);
  poison(out);
  kc::take_values(d_qkv.data(), d_bias.data(), rows, width, out.data(), nullptr);
  std::vector<float> want;
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < width; ++j) {
      want.push_back(qkv[static_cast<std::size_t>(r) * 3 * width + 2 * width + j] + bias[2 * width + j]);
    }
  }
  expect_close(download(out.data(), out.size()), rounded<T>(want), 0.0, "take_values");
}

// ---- Entry, head and the end of a step (float2/float4 state, FP32 only)

TEST(TrackOpsFp32, EntryPointsMatchSession) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(22);
  const int S = static_cast<int>(kSlots.size());
  const float velocity = 0.5f;
  std::vector<float2> query(kCapacity), position(kCapacity), previous(kCapacity);
  std::uniform_real_distribution<float> u(-50, 300);
  for (int s = 0; s < kCapacity; ++s) {
    query[s] = {u(rng), u(rng)};
    position[s] = {u(rng), u(rng)};
    previous[s] = {u(rng), u(rng)};
  }
  auto d_slots = upload_raw(kSlots);
  auto d_query = upload_raw(query);
  auto d_position = upload_raw(position);
  auto d_previous = upload_raw(previous);
  for (const bool query_step : {false, true}) {
    SCOPED_TRACE(query_step ? "query step" : "tracking step");
    DeviceBuffer<float2> points(S, testing::kLegacyStream);
    poison(points);
    kc::entry_points(d_slots.data(), S, d_query.data(), d_position.data(), d_previous.data(), velocity, query_step,
                     points.data(), nullptr);
    std::vector<float2> want(S);
    for (int i = 0; i < S; ++i) {
      const int s = kSlots[i];
      want[i] = query_step ? query[s]
                           : float2{position[s].x + velocity * (position[s].x - previous[s].x),
                                    position[s].y + velocity * (position[s].y - previous[s].y)};
    }
    expect_close(flatten(download_raw(points.data(), S)), flatten(want), kTolF32, "entry points");
  }
}

TEST(TrackOpsFp32, ApplyHeadMovesPointsExceptOnQueryStep) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(23);
  const int S = 9;
  const std::vector<float> acc = random_floats(static_cast<std::size_t>(S) * 4, -3, 3, rng);
  const std::vector<float> bias = random_floats(4, -1, 1, rng);
  std::vector<float2> points(S);
  std::uniform_real_distribution<float> u(0, 200);
  for (float2& p : points) p = {u(rng), u(rng)};
  auto d_acc = upload<float>(acc);
  auto d_bias = upload<float>(bias);
  for (const bool query_step : {false, true}) {
    SCOPED_TRACE(query_step ? "query step" : "tracking step");
    auto d_points = upload_raw(points);
    kc::apply_head(d_acc.data(), d_bias.data(), S, query_step, d_points.data(), nullptr);
    std::vector<float2> want = points;
    for (int i = 0; i < S && !query_step; ++i) {
      want[i].x += acc[i * 4 + 0] + bias[0];
      want[i].y += acc[i * 4 + 1] + bias[1];
    }
    expect_close(flatten(download_raw(d_points.data(), S)), flatten(want), kTolF32, "points");
  }
}

TEST(TrackOpsFp32, FinishStepMatchesSession) {
  EDGETAP_REQUIRE_GPU();
  std::mt19937 rng(24);
  const int S = static_cast<int>(kSlots.size());
  const std::vector<float> acc = random_floats(static_cast<std::size_t>(S) * 4, -4, 4, rng);
  const std::vector<float> bias = random_floats(4, -1, 1, rng);
  std::uniform_real_distribution<float> u(0, 200);
  std::vector<float2> points(S), position(kCapacity), previous(kCapacity);
  for (float2& p : points) p = {u(rng), u(rng)};
  for (int s = 0; s < kCapacity; ++s) {
    position[s] = {u(rng), u(rng)};
    previous[s] = {u(rng), u(rng)};
  }
  const auto sigmoid = [](float x) { return 1.f / (1.f + std::exp(-x)); };
  auto d_acc = upload<float>(acc);
  auto d_bias = upload<float>(bias);
  auto d_slots = upload_raw(kSlots);
  auto d_points = upload_raw(points);
  for (const bool query_step : {false, true}) {
    SCOPED_TRACE(query_step ? "query step" : "tracking step");
    auto d_position = upload_raw(position);
    auto d_previous = upload_raw(previous);
    DeviceBuffer<float4> estimate(kCapacity, testing::kLegacyStream);
    poison(estimate);
    kc::finish_step(d_acc.data(), d_bias.data(), d_slots.data(), S, query_step, d_points.data(), d_position.data(),
                    d_previous.data(), estimate.data(), nullptr);
    std::vector<float2> want_position = position, want_previous = previous;
    std::vector<float4> want_estimate(kCapacity, float4{kNaN, kNaN, kNaN, kNaN});  // other slots untouched
    for (int i = 0; i < S; ++i) {
      const int s = kSlots[i];
      want_previous[s] = position[s];
      want_position[s] = points[i];
      want_estimate[s] = {points[i].x, points[i].y, query_step ? 1.f : sigmoid(acc[i * 4 + 2] + bias[2]),
                          query_step ? 1.f : sigmoid(acc[i * 4 + 3] + bias[3])};
    }
    expect_close(flatten(download_raw(d_position.data(), kCapacity)), flatten(want_position), kTolF32, "position");
    expect_close(flatten(download_raw(d_previous.data(), kCapacity)), flatten(want_previous), kTolF32, "previous");
    expect_close(flatten(download_raw(estimate.data(), kCapacity)), flatten(want_estimate), kTolF32, "estimate");
  }
}

// No rows: nothing is launched, so null pointers are fine.
TYPED_TEST(TrackOps, ZeroRowsLaunchNothing) {
  EDGETAP_REQUIRE_GPU();
  using T = TypeParam;
  kc::PyramidView<T> pyramid;
  pyramid.levels = 1;
  pyramid.channels = 64;
  EXPECT_NO_THROW({
    kc::entry_points(nullptr, 0, nullptr, nullptr, nullptr, 0.f, false, nullptr, nullptr);
    kc::sample_descriptors<T>(pyramid, nullptr, nullptr, 0, 3, nullptr, 0, nullptr);
    kc::window_correlation<T>(pyramid, nullptr, nullptr, 0, 3, nullptr, 0, 0, nullptr, 0, 3, nullptr, nullptr);
    kc::bias_activation<T>(nullptr, nullptr, 0, 64, true, nullptr, nullptr);
    kc::broadcast_row(nullptr, 0, 64, nullptr, nullptr);
    kc::layer_norm_rows<T>(nullptr, nullptr, 0, 64, nullptr, nullptr, nullptr, nullptr);
    kc::token_inputs<T>(nullptr, nullptr, 64, nullptr, nullptr, nullptr, 0, 64.f, 4, false, nullptr, nullptr);
    kc::attend_cached<T>(nullptr, nullptr, nullptr, 0, 8, 32, 8, false, nullptr, nullptr, 0, 0, nullptr, nullptr,
                         nullptr, nullptr, nullptr);
    kc::softmax_rows<T>(nullptr, 0, 0, 1.f, nullptr, nullptr);
    kc::take_values<T>(nullptr, nullptr, 0, 64, nullptr, nullptr);
    kc::apply_head(nullptr, nullptr, 0, false, nullptr, nullptr);
    kc::finish_step(nullptr, nullptr, nullptr, 0, false, nullptr, nullptr, nullptr, nullptr, nullptr);
  });
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace edgetap::gpu
