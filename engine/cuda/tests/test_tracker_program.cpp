// The tracker program (edgetap/kernels/cuda/tracker_program.hpp) against the
// kernels it stands for launched one by one (tile products, attend_cached,
// cross_attention, each checked against the CPU engine in its own test): a
// block, a cross-track layer and the head's product on random weights and
// window caches. The program runs the same device code in the same order, so
// the results must be equal bit for bit.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgetap/kernels/cuda/cross_attention.hpp"
#include "edgetap/kernels/cuda/tracker_program.hpp"
#include "gpu_test_support.hpp"

#include "track_ops_test_support.hpp"

namespace edgetap::gpu {
namespace {

using namespace track_ops_testing;

constexpr int kWindow = 8;
constexpr int kMlpRatio = kc::kTrackerProgramMlpRatio;

// A linear layer's weights ([out][in], half) and bias on the device.
struct Linear {
  int in, out;
  DeviceBuffer<__half> weight;
  DeviceBuffer<float> bias;
};
Linear random_linear(int in, int out, std::mt19937& rng) {
  const float s = 1.f / std::sqrt(static_cast<float>(in));
  return {in, out, upload<__half>(random_floats(static_cast<std::size_t>(out) * in, -s, s, rng)),
          upload<float>(random_floats(out, -0.2f, 0.2f, rng))};
}
struct Norm {
  DeviceBuffer<float> gamma, beta;
};
Norm random_norm(int width, std::mt19937& rng) {
  return {upload<float>(random_floats(width, 0.5f, 1.5f, rng)), upload<float>(random_floats(width, -0.5f, 0.5f, rng))};
}

// The buffers one run writes: the residual stream, the work rows, the head's sums and the caches.
struct State {
  DeviceBuffer<float> x, qkv, head_acc;
  DeviceBuffer<__half> attended, hidden, keys, values;
};

struct Case {
  int width, heads, rows;
};

class TrackerProgramCase : public ::testing::TestWithParam<Case> {};

TEST_P(TrackerProgramCase, EqualsTheKernelsOneByOne) {
  EDGETAP_REQUIRE_GPU();
  const auto [W, heads, S] = GetParam();
  const int dh = W / heads, hidden = kMlpRatio * W;
  std::mt19937 rng(71);
  const Norm ln1 = random_norm(W, rng), ln2 = random_norm(W, rng), ln_cross = random_norm(W, rng),
             ln_out = random_norm(W, rng);
  const Linear qkv = random_linear(W, 3 * W, rng), proj = random_linear(W, W, rng), fc1 = random_linear(W, hidden, rng),
               fc2 = random_linear(hidden, W, rng), cross_qkv = random_linear(W, 3 * W, rng),
               cross_proj = random_linear(W, W, rng), head = random_linear(W, 4, rng);
  const auto pending = upload<float>(random_floats(W, -0.5f, 0.5f, rng));
  const auto rel_bias = upload<float>(random_floats(static_cast<std::size_t>(heads) * (kWindow + 1), -1, 1, rng));

  // Slots in shuffled order, each track queried at a frame of its own; the clock at frame 11.
  std::vector<int> slots(static_cast<std::size_t>(S));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<std::int64_t> query_frames(static_cast<std::size_t>(S));
  for (std::int64_t& f : query_frames) f = std::uniform_int_distribution<int>(0, 11)(rng);
  kc::FrameClock clock;
  clock.t = 11;
  for (int j = 0; j < kWindow; ++j) clock.slot_frame[j] = 11 - (11 - j) % kWindow;
  const auto d_slots = upload_raw(slots);
  const auto d_query_frames = upload_raw(query_frames);
  const auto d_clock = upload_raw(std::vector<kc::FrameClock>{clock});
  const std::size_t slot_stride = static_cast<std::size_t>(heads) * (kWindow + 1) * dh;

  const std::vector<float> x0 = random_floats(static_cast<std::size_t>(S) * W, -2, 2, rng);
  const std::vector<float> cache0 = random_floats(static_cast<std::size_t>(S) * slot_stride, -1, 1, rng);
  auto fresh_state = [&] {
    State s{upload<float>(x0),
            DeviceBuffer<float>(static_cast<std::size_t>(S) * 3 * W, testing::kLegacyStream),
            DeviceBuffer<float>(static_cast<std::size_t>(S) * 4, testing::kLegacyStream),
            DeviceBuffer<__half>(static_cast<std::size_t>(S) * W, testing::kLegacyStream),
            DeviceBuffer<__half>(static_cast<std::size_t>(S) * hidden, testing::kLegacyStream),
            upload<__half>(cache0),
            upload<__half>(cache0)};
    return s;
  };
  auto added_to_x = [](const Linear& l, State& s, const float* owed) {
    return kc::ProductOut{.bias = l.bias.data(), .out = s.x.data(), .add = true, .residual_bias = owed};
  };

  // The kernels one by one, as CudaStreamingSession's block_in_tiles, cross_track and head run them.
  State one = fresh_state();
  kc::normed_product(one.x.data(), pending.data(), S, W, ln1.gamma.data(), ln1.beta.data(), qkv.weight.data(), 3 * W,
                     {.out = one.qkv.data()}, nullptr);
  kc::attend_cached<__half>(one.qkv.data(), qkv.bias.data(), d_slots.data(), S, heads, dh, kWindow, false,
                            one.keys.data(), one.values.data(), slot_stride, 0, rel_bias.data(), d_query_frames.data(),
                            d_clock.data(), one.attended.data(), nullptr);
  kc::half_product(one.attended.data(), S, W, proj.weight.data(), W, added_to_x(proj, one, pending.data()), nullptr);
  kc::normed_product(one.x.data(), nullptr, S, W, ln2.gamma.data(), ln2.beta.data(), fc1.weight.data(), hidden,
                     {.bias = fc1.bias.data(), .gelu = true, .out_half = one.hidden.data()}, nullptr);
  kc::half_product(one.hidden.data(), S, hidden, fc2.weight.data(), W, added_to_x(fc2, one, nullptr), nullptr);
  kc::normed_product(one.x.data(), nullptr, S, W, ln_cross.gamma.data(), ln_cross.beta.data(),
                     cross_qkv.weight.data(), 3 * W, {.out = one.qkv.data()}, nullptr);
  kc::cross_attention(one.qkv.data(), cross_qkv.bias.data(), S, heads, dh, one.attended.data(), nullptr);
  kc::half_product(one.attended.data(), S, W, cross_proj.weight.data(), W, added_to_x(cross_proj, one, nullptr),
                   nullptr);
  kc::normed_product(one.x.data(), nullptr, S, W, ln_out.gamma.data(), ln_out.beta.data(), head.weight.data(), 4,
                     {.out = one.head_acc.data()}, nullptr);

  // The same as one program.
  State all = fresh_state();
  kc::TrackerProgram p{};
  p.rows = S;
  p.width = W;
  p.heads = heads;
  p.caches = {d_slots.data(), kWindow, all.keys.data(), all.values.data(), slot_stride, rel_bias.data(),
              d_query_frames.data(), d_clock.data()};
  const kc::Phase phases[] = {
      kc::normed_product_phase(all.x.data(), pending.data(), W, ln1.gamma.data(), ln1.beta.data(), qkv.weight.data(),
                               3 * W, {.out = all.qkv.data()}),
      kc::attend_phase(all.qkv.data(), qkv.bias.data(), 0, all.attended.data()),
      kc::half_product_phase(all.attended.data(), W, proj.weight.data(), W, added_to_x(proj, all, pending.data())),
      kc::normed_product_phase(all.x.data(), nullptr, W, ln2.gamma.data(), ln2.beta.data(), fc1.weight.data(), hidden,
                               {.bias = fc1.bias.data(), .gelu = true, .out_half = all.hidden.data()}),
      kc::half_product_phase(all.hidden.data(), hidden, fc2.weight.data(), W, added_to_x(fc2, all, nullptr)),
      kc::normed_product_phase(all.x.data(), nullptr, W, ln_cross.gamma.data(), ln_cross.beta.data(),
                               cross_qkv.weight.data(), 3 * W, {.out = all.qkv.data()}),
      kc::cross_phase(all.qkv.data(), cross_qkv.bias.data(), all.attended.data()),
      kc::half_product_phase(all.attended.data(), W, cross_proj.weight.data(), W, added_to_x(cross_proj, all, nullptr)),
      kc::normed_product_phase(all.x.data(), nullptr, W, ln_out.gamma.data(), ln_out.beta.data(), head.weight.data(),
                               4, {.out = all.head_acc.data()}),
  };
  for (const kc::Phase& ph : phases) p.phases[p.count++] = ph;
  kc::run_tracker_program(p, nullptr);
  EDGETAP_CUDA_CHECK(cudaDeviceSynchronize());

  auto same_bits = [](const auto& a, const auto& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0]))) << what << " differs";
  };
  same_bits(download_raw(all.x.data(), all.x.size()), download_raw(one.x.data(), one.x.size()), "x");
  same_bits(download_raw(all.head_acc.data(), all.head_acc.size()),
            download_raw(one.head_acc.data(), one.head_acc.size()), "the head's sums");
  same_bits(download_raw(all.keys.data(), all.keys.size()), download_raw(one.keys.data(), one.keys.size()), "keys");
  same_bits(download_raw(all.values.data(), all.values.size()), download_raw(one.values.data(), one.values.size()),
            "values");
}

// edgetap-large's shape (256 wide, 8 heads of 32) and edgetap-small's (128, 4 of 32), at a few rows
// and at more work items than the device holds blocks at once.
INSTANTIATE_TEST_SUITE_P(Models, TrackerProgramCase,
                         ::testing::Values(Case{256, 8, 45}, Case{256, 8, 1280}, Case{128, 4, 70}, Case{128, 4, 1024}),
                         [](const auto& info) {
                           return "width_" + std::to_string(info.param.width) + "_rows_" +
                                  std::to_string(info.param.rows);
                         });

TEST(TrackerProgram, RefusesWhatItDoesNotTake) {
  EXPECT_TRUE(kc::tracker_program_takes(256, 1024, 32));
  EXPECT_FALSE(kc::tracker_program_takes(32, 64, 16));    // the tiny networks: MLP of 2 x width
  EXPECT_FALSE(kc::tracker_program_takes(256, 512, 32));
  EXPECT_FALSE(kc::tracker_program_takes(256, 1024, 48));
  kc::TrackerProgram p{};
  p.rows = 4;
  p.width = 256;
  p.heads = 8;
  p.count = kc::kMaxPhases + 1;
  EXPECT_THROW(kc::run_tracker_program(p, nullptr), std::invalid_argument);
  p.count = 1;
  p.phases[0] = kc::half_product_phase(nullptr, 512, nullptr, 256, {});  // a depth the model does not have
  EXPECT_THROW(kc::run_tracker_program(p, nullptr), std::invalid_argument);
  p.width = 96;
  p.heads = 3;
  EXPECT_THROW(kc::run_tracker_program(p, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace edgetap::gpu
