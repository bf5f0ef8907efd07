// Parity of the CPU engine with the PyTorch streaming reference: the golden
// vectors (tests/data/golden, made by training/export.py) hold a 10-frame clip,
// 5 queries at several frames, encoder features, descriptors, correlations and
// the outputs of every frame. The shipped, trained networks (edgetap-small;
// edgetap-large, whose file stores FP16 weights), and tiny random-weight ones
// (training/make_test_model.py) with a 3x3 query neighbourhood and other sizes,
// so configurations the shipped models do not use are checked too (cross-track
// layers after both blocks; a stride-2 level; frames entered at the previous
// output plus half its last displacement, entry_velocity 0.5; a second, recent
// descriptor set per track, recent_descriptors).
#include <gtest/gtest.h>

#include <cmath>

#include "edgetap/engine/clip_tracking.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "edgetap/engine/streaming_session.hpp"

using namespace edgetap;

namespace {

// FP32 on both sides; differences come from summation order (BLAS vs PyTorch).
constexpr float kFeatureTolerance = 2e-3f;      // encoder features, descriptors (values ~1)
constexpr float kCorrelationTolerance = 2e-3f;  // correlation vectors of the first iteration
constexpr float kPositionTolerancePx = 2e-2f;   // final x, y after up to 10 streamed frames
constexpr float kProbabilityTolerance = 2e-3f;  // visibility and confidence

const std::string kSource = EDGETAP_SOURCE_DIR;

struct GoldenCase {
  std::string weights_stem;  // <stem>.safetensors and <stem>.json
  std::string golden;
};

struct Golden : ::testing::TestWithParam<GoldenCase> {
  engine::Network network = engine::load_network(kSource + GetParam().weights_stem + ".safetensors",
                                                 kSource + GetParam().weights_stem + ".json");
  engine::TensorMap golden = engine::load_safetensors(kSource + GetParam().golden);
  const engine::Tensor& g(const std::string& name) { return golden.at(name); }
};

}  // namespace

TEST_P(Golden, StreamingMatchesThePyTorchReference) {
  const engine::Tensor& frames = g("frames");
  const int T = static_cast<int>(frames.shape[0]), H = static_cast<int>(frames.shape[1]),
            W = static_cast<int>(frames.shape[2]);
  const int N = static_cast<int>(g("query_t").shape[0]);
  const int n_corr = network.config.n_corr(), D = network.config.feat_dim;
  // corr holds iterations 0..K'-1 of every frame (K' = 1 in files written since edgetap-large-v6).
  const std::size_t corr_iters = g("corr").shape[1];
  engine::StreamingSession session(network);
  std::vector<int> handle(N, -1);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(H) * W * 3);
  float worst_position = 0.f;
  for (int t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(frames.data[t * rgb.size() + i]);
    ASSERT_TRUE(session.push_frame({rgb.data(), W, H, static_cast<std::size_t>(W) * 3}).is_ok());

    // Correlations of the tracks stepped by this push (active ones, in handle order).
    std::vector<int> stepped;
    for (int n = 0; n < N; ++n) {
      if (handle[n] >= 0) stepped.push_back(n);
    }
    std::sort(stepped.begin(), stepped.end(), [&](int a, int b) { return handle[a] < handle[b]; });
    const auto& corr = session.last_first_correlation();
    for (std::size_t s = 0; s < stepped.size(); ++s) {
      const int n = stepped[s];
      for (int c = 0; c < n_corr; ++c) {
        const float expected = g("corr").data[((static_cast<std::size_t>(t) * corr_iters + 0) * N + n) * n_corr + c];
        ASSERT_NEAR(corr[s * n_corr + c], expected, kCorrelationTolerance) << "frame " << t << " track " << n << " corr " << c;
      }
    }
    // Tracks whose query frame this is start here.
    for (int n = 0; n < N; ++n) {
      if (static_cast<int>(g("query_t").data[n]) != t) continue;
      const engine::Point2 q{g("query_xy").data[2 * n], g("query_xy").data[2 * n + 1]};
      handle[n] = session.add_tracks(std::vector<engine::Point2>{q})[0];
      const auto& desc = session.descriptors(handle[n]);
      for (std::size_t i = 0; i < desc.size(); ++i) {
        ASSERT_NEAR(desc[i], g("desc").data[static_cast<std::size_t>(n) * desc.size() + i], kFeatureTolerance)
            << "descriptor of track " << n << " at " << i;
      }
    }
    for (int n = 0; n < N; ++n) {
      if (handle[n] < 0) continue;
      const engine::TrackEstimate& e = session.estimate(handle[n]);
      const float* xy = g("out_xy").data.data() + (static_cast<std::size_t>(t) * N + n) * 2;
      EXPECT_NEAR(e.x, xy[0], kPositionTolerancePx) << "frame " << t << " track " << n;
      EXPECT_NEAR(e.y, xy[1], kPositionTolerancePx) << "frame " << t << " track " << n;
      EXPECT_NEAR(e.visible, g("out_vis").data[t * N + n], kProbabilityTolerance) << "frame " << t << " track " << n;
      EXPECT_NEAR(e.confidence, g("out_conf").data[t * N + n], kProbabilityTolerance) << "frame " << t << " track " << n;
      worst_position = std::max({worst_position, std::abs(e.x - xy[0]), std::abs(e.y - xy[1])});
    }
    // Encoder features where the golden file has them ([D, h, w] there, HWC here).
    for (int l = 0; l < 4; ++l) {
      const std::string name = "enc_f" + std::to_string(network.config.strides[l]) + "_t" + std::to_string(t);
      if (!golden.count(name)) continue;
      const engine::FeatureMap& f = session.pyramid().levels[l];
      for (int c = 0; c < D; ++c)
        for (int y = 0; y < f.height; ++y)
          for (int x = 0; x < f.width; ++x)
            ASSERT_NEAR(f.data[(static_cast<std::size_t>(y) * f.width + x) * D + c],
                        g(name).data[(static_cast<std::size_t>(c) * f.height + y) * f.width + x], kFeatureTolerance)
                << name << " c" << c << " y" << y << " x" << x;
    }
  }
  std::printf("largest position difference over the clip: %.5f px\n", worst_position);
}

TEST_P(Golden, OfflineClipApiGivesTheReferenceOutputs) {
  const engine::Tensor& frames = g("frames");
  const int T = static_cast<int>(frames.shape[0]), H = static_cast<int>(frames.shape[1]),
            W = static_cast<int>(frames.shape[2]);
  const int N = static_cast<int>(g("query_t").shape[0]);
  std::vector<std::vector<std::uint8_t>> rgb(static_cast<std::size_t>(T));
  std::vector<ImageView> views;
  for (int t = 0; t < T; ++t) {
    const std::size_t n = static_cast<std::size_t>(H) * W * 3;
    rgb[t].resize(n);
    for (std::size_t i = 0; i < n; ++i) rgb[t][i] = static_cast<std::uint8_t>(frames.data[t * n + i]);
    views.push_back({rgb[t].data(), W, H, static_cast<std::size_t>(W) * 3});
  }
  std::vector<engine::ClipQuery> queries;
  for (int n = 0; n < N; ++n) {
    queries.push_back({static_cast<int>(g("query_t").data[n]), g("query_xy").data[2 * n], g("query_xy").data[2 * n + 1]});
  }
  const engine::ClipResult result = engine::track_clip(network, views, queries);
  for (int n = 0; n < N; ++n) {
    for (int t = queries[n].frame; t < T; ++t) {
      const float* xy = g("out_xy").data.data() + (static_cast<std::size_t>(t) * N + n) * 2;
      EXPECT_NEAR(result.tracks[n][t].x, xy[0], kPositionTolerancePx) << "track " << n << " frame " << t;
      EXPECT_NEAR(result.tracks[n][t].y, xy[1], kPositionTolerancePx) << "track " << n << " frame " << t;
    }
  }
  EXPECT_THROW(engine::track_clip(network, views, {{T, 1.f, 1.f}}), std::invalid_argument);
}

std::string network_name(const ::testing::TestParamInfo<GoldenCase>& param) {
  const char* const names[] = {"Shipped", "ShippedLarge", "TinyQueryPatch3", "TinyCrossTrack", "TinyStride2Level",
                               "TinyEntryVelocity", "TinyRecentDescriptors", "TinyCrossScale"};
  return names[param.index];
}

INSTANTIATE_TEST_SUITE_P(
    Networks, Golden,
    ::testing::Values(GoldenCase{"/models/edgetap-small", "/tests/data/golden/edgetap-small-golden.safetensors"},
                      GoldenCase{"/models/edgetap-large", "/tests/data/golden/edgetap-large-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-qp3",
                                 "/tests/data/golden/edgetap-tiny-qp3-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-cross",
                                 "/tests/data/golden/edgetap-tiny-cross-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-fine",
                                 "/tests/data/golden/edgetap-tiny-fine-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-velocity",
                                 "/tests/data/golden/edgetap-tiny-velocity-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-recent",
                                 "/tests/data/golden/edgetap-tiny-recent-golden.safetensors"},
                      GoldenCase{"/tests/data/golden/edgetap-tiny-scale",
                                 "/tests/data/golden/edgetap-tiny-scale-golden.safetensors"}),
    network_name);
