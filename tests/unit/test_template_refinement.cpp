// Template refinement after the network: the affine alignment against frames
// whose motion is known exactly (a smooth analytic texture moved by a known
// warp), its rejections, and RefinedSession over a network session whose
// outputs the test sets.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/refined_session.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "edgetap/engine/template_aligner.hpp"
#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/ladder/tracker_factory.hpp"
#include "support/moved_texture.hpp"
#include "support/random_network.hpp"
#include "support/refined_golden.hpp"
#include "support/scripted_session.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using engine::AffineWarp;
using engine::TemplateAlignmentConfig;

using test::moved;
using test::render;
using test::RgbFrame;
using test::texture;
constexpr int kSide = test::kTextureSide;

TEST(TemplateAlignment, GreyFrameWeighsTheChannelsAndDifferencesInside) {
  std::vector<std::uint8_t> px(3 * 4 * 3, 0);
  for (int i = 0; i < 12; ++i) {  // a 4 x 3 frame: red rising along x, green constant, blue by row
    const int x = i % 4, y = i / 4;
    px[3 * i] = static_cast<std::uint8_t>(10 * x);
    px[3 * i + 1] = 100;
    px[3 * i + 2] = static_cast<std::uint8_t>(20 * y);
  }
  const engine::GreyFrame g = engine::grey_frame(ImageView{px.data(), 4, 3, 12});
  using G = engine::GreyFrame;
  EXPECT_NEAR(g.at(1 * 4 + 2, G::kGrey), 0.299f * 20 + 0.587f * 100 + 0.114f * 20, 1e-4);
  EXPECT_NEAR(g.at(1 * 4 + 1, G::kDx), 0.299f * 10, 1e-4);  // central difference: (g(2) - g(0)) / 2
  EXPECT_NEAR(g.at(1 * 4 + 1, G::kDy), 0.114f * 20, 1e-4);
  EXPECT_EQ(g.at(1 * 4 + 0, G::kDx), 0.f);  // outermost columns and rows are 0
  EXPECT_EQ(g.at(0 * 4 + 1, G::kDy), 0.f);
  // Bilinear between pixel centres, clamped beyond the frame.
  EXPECT_NEAR(engine::sample_clamped(g, G::kGrey, 1.5f, 1.f), 0.5f * (g.at(5, G::kGrey) + g.at(6, G::kGrey)), 1e-4);
  EXPECT_EQ(engine::sample_clamped(g, G::kGrey, -3.f, -1.f), g.at(0, G::kGrey));
  EXPECT_EQ(engine::sample_clamped(g, G::kGrey, 9.f, 7.f), g.at(11, G::kGrey));
}

TEST(TemplateAlignment, RecoversASubPixelShiftFromAPixelAway) {
  const TemplateAlignmentConfig config;
  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 1.37, -0.64);
  const engine::GreyFrame ga = engine::grey_frame(a.view()), gb = engine::grey_frame(b.view());
  const std::vector<float> tmpl = engine::capture_template(ga, 60.f, 66.f, config);
  ASSERT_EQ(tmpl.size(), static_cast<std::size_t>(config.cells()));
  const auto truth = moved(60, 66, {1, 0, 0, 1}, 1.37, -0.64);
  const engine::AlignmentResult r = engine::align_template(gb, tmpl, static_cast<float>(truth[0] + 0.8),
                                                           static_cast<float>(truth[1] - 0.6), AffineWarp{}, config);
  ASSERT_TRUE(r.accepted) << "ncc " << r.ncc;
  EXPECT_NEAR(r.x, truth[0], 0.05);
  EXPECT_NEAR(r.y, truth[1], 0.05);
  EXPECT_GT(r.ncc, 0.99f);
}

TEST(TemplateAlignment, FollowsATurnAndAZoomWithItsWarp) {
  const TemplateAlignmentConfig config;
  const double angle = 0.12, scale = 1.08;  // 6.9 degrees, 8% larger
  const std::array<double, 4> S{scale * std::cos(angle), -scale * std::sin(angle), scale * std::sin(angle),
                                scale * std::cos(angle)};
  const RgbFrame a = render(texture), b = render(texture, S, 0.4, 0.9);
  const engine::GreyFrame ga = engine::grey_frame(a.view()), gb = engine::grey_frame(b.view());
  const std::vector<float> tmpl = engine::capture_template(ga, 70.f, 58.f, config);
  const auto truth = moved(70, 58, S, 0.4, 0.9);
  const float x0 = static_cast<float>(truth[0] - 0.7), y0 = static_cast<float>(truth[1] + 0.5);
  const engine::AlignmentResult r = engine::align_template(gb, tmpl, x0, y0, AffineWarp{}, config);
  ASSERT_TRUE(r.accepted) << "ncc " << r.ncc;
  EXPECT_NEAR(r.x, truth[0], 0.1);
  EXPECT_NEAR(r.y, truth[1], 0.1);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(r.warp.a[static_cast<std::size_t>(k)], S[static_cast<std::size_t>(k)], 0.03) << k;
  // Without the warp the translation alone cannot match the turned patch as well.
  TemplateAlignmentConfig one = config;
  one.iters = 1;
  const engine::AlignmentResult first = engine::align_template(gb, tmpl, x0, y0, AffineWarp{}, one);
  EXPECT_LT(first.ncc, r.ncc);
}

TEST(TemplateAlignment, RejectsFlatPatchesFarMovesAndOtherContent) {
  TemplateAlignmentConfig config;
  const RgbFrame flat = render([](double, double) { return 90.0; });
  EXPECT_TRUE(engine::capture_template(engine::grey_frame(flat.view()), 64.f, 64.f, config).empty());
  EXPECT_TRUE(engine::capture_template(engine::GreyFrame{}, 64.f, 64.f, config).empty());  // no frame yet

  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 1.5, 0);
  const engine::GreyFrame ga = engine::grey_frame(a.view()), gb = engine::grey_frame(b.view());
  const std::vector<float> tmpl = engine::capture_template(ga, 64.f, 64.f, config);
  // The truth is 1.5 px from the start: past max_shift 1, the start stands.
  config.max_shift = 1.f;
  engine::AlignmentResult r = engine::align_template(gb, tmpl, 64.f, 64.f, AffineWarp{}, config);
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.x, 64.f);
  EXPECT_EQ(r.y, 64.f);
  config.max_shift = 2.f;
  r = engine::align_template(gb, tmpl, 64.f, 64.f, AffineWarp{}, config);
  EXPECT_TRUE(r.accepted);
  EXPECT_NEAR(r.x, 65.5f, 0.05);
  // A different texture: the correlation stays under min_ncc.
  const RgbFrame other = render([](double x, double y) { return 128 + 60 * std::sin(0.9 * x) * std::cos(0.8 * y); });
  r = engine::align_template(engine::grey_frame(other.view()), tmpl, 64.f, 64.f, AffineWarp{}, config);
  EXPECT_FALSE(r.accepted) << "ncc " << r.ncc;
  EXPECT_LT(r.ncc, config.min_ncc);
  // A network output that is not a number is published as it is, never aligned.
  r = engine::align_template(gb, tmpl, std::nanf(""), 64.f, AffineWarp{}, config);
  EXPECT_FALSE(r.accepted);
}


TEST(RefinedSession, AlignsVisibleOutputsAndLeavesTheNetworkAlone) {
  auto network = std::make_unique<test::ScriptedSession>();
  test::ScriptedSession& net = *network;
  engine::ModelConfig model;  // rule "vis" at 0.5
  engine::RefinedSession session(std::move(network), TemplateAlignmentConfig{}, model);
  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 1.2, 0.7);
  ASSERT_TRUE(session.push_frame(a.view()));
  const std::vector<engine::Point2> queries{{50.f, 50.f}, {80.f, 70.f}, {64.f, 40.f}};
  const std::vector<int> h = session.add_tracks(queries);
  ASSERT_EQ(h.size(), 3u);
  // At its query frame a track is its query point.
  EXPECT_EQ(session.estimate(h[0]).x, 50.f);
  // The network's next outputs: off by about a pixel; the third one hidden.
  net.next = {{51.2f + 0.6f, 50.7f - 0.5f, 0.9f, 0.8f}, {81.2f - 0.4f, 70.7f + 0.7f, 0.7f, 0.9f},
              {65.2f + 0.5f, 40.7f, 0.2f, 0.9f}};
  ASSERT_TRUE(session.push_frame(b.view()));
  EXPECT_EQ(session.last_accepted(), 2);
  EXPECT_NEAR(session.estimate(h[0]).x, 51.2f, 0.05);
  EXPECT_NEAR(session.estimate(h[0]).y, 50.7f, 0.05);
  EXPECT_NEAR(session.estimate(h[1]).x, 81.2f, 0.05);
  EXPECT_NEAR(session.estimate(h[1]).y, 70.7f, 0.05);
  EXPECT_FLOAT_EQ(session.estimate(h[0]).visible, 0.9f);  // visibility and confidence are the network's
  EXPECT_FLOAT_EQ(session.estimate(h[0]).confidence, 0.8f);
  EXPECT_EQ(session.estimate(h[2]).x, 65.2f + 0.5f);       // hidden: the network's output as it is
  // The network's own state is untouched: it keeps its outputs.
  EXPECT_FLOAT_EQ(net.estimate(h[0]).x, 51.2f + 0.6f);
  session.remove_track(h[1]);
  EXPECT_FALSE(session.alive(h[1]));
  EXPECT_EQ(session.frames(), 2);
}

// An aligner that does the CPU's work and remembers the warm-ups it was asked for.
class WarmUpRecordingAligner final : public engine::TemplateAligner {
 public:
  struct WarmUp {
    int width, height, tracks;
  };
  std::vector<WarmUp> warm_ups;
  void set_frame(const ImageView& frame) override { cpu_.set_frame(frame); }
  std::vector<bool> capture(std::span<const int> handles, std::span<const engine::Point2> points) override {
    return cpu_.capture(handles, points);
  }
  void align(std::span<const engine::AlignmentJob> jobs, std::vector<engine::AlignmentResult>& results) override {
    cpu_.align(jobs, results);
  }
  void warm_up(int width, int height, int tracks) override { warm_ups.push_back({width, height, tracks}); }

 private:
  engine::CpuTemplateAligner cpu_{TemplateAlignmentConfig{}, 1};
};

// The aligner's set-up is paid with the network's, before the first frame, for as
// many tracks; the session then aligns as one that was never warmed up.
TEST(RefinedSession, WarmsUpItsAlignerWithItsNetwork) {
  auto aligner = std::make_unique<WarmUpRecordingAligner>();
  WarmUpRecordingAligner& recorded = *aligner;
  auto network = std::make_unique<test::ScriptedSession>();
  test::ScriptedSession& net = *network;
  engine::RefinedSession session(std::move(network), std::move(aligner), engine::ModelConfig{});
  session.warm_up(kSide, kSide, std::array{8, 32});
  ASSERT_EQ(recorded.warm_ups.size(), 1u);
  EXPECT_EQ(recorded.warm_ups[0].width, kSide);
  EXPECT_EQ(recorded.warm_ups[0].height, kSide);
  EXPECT_EQ(recorded.warm_ups[0].tracks, 40);  // both batches' tracks
  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 1.2, 0.7);
  ASSERT_TRUE(session.push_frame(a.view()));
  const std::vector<int> h = session.add_tracks(std::vector<engine::Point2>{{50.f, 50.f}});
  net.next = {{51.2f + 0.6f, 50.7f - 0.5f, 0.9f, 0.8f}};
  ASSERT_TRUE(session.push_frame(b.view()));
  EXPECT_EQ(session.last_accepted(), 1);
  EXPECT_NEAR(session.estimate(h[0]).x, 51.2f, 0.05);
}

TEST(RefinedSession, ModelFilesDeclareItAndBadValuesNameTheKey) {
  test::TempDir dir;
  const test::NetworkFiles files = test::write_random_network(dir.path().string(), 7);
  EXPECT_FALSE(engine::load_model_config(files.config_path).refinement.has_value());  // absent: none
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["refinement"] = {{"radius", 7}, {"iters", 3}, {"min_ncc", 0.5}, {"max_shift", 1.5}};
  std::ofstream(files.config_path) << config.dump();
  const engine::ModelConfig on = engine::load_model_config(files.config_path);
  ASSERT_TRUE(on.refinement.has_value());
  EXPECT_EQ(on.refinement->radius, 7);
  EXPECT_EQ(on.refinement->iters, 3);
  EXPECT_FLOAT_EQ(on.refinement->min_ncc, 0.5f);
  EXPECT_FLOAT_EQ(on.refinement->max_shift, 1.5f);
  const auto error_with = [&](const nlohmann::json& refinement) {
    config["refinement"] = refinement;
    std::ofstream(files.config_path) << config.dump();
    try {
      engine::load_model_config(files.config_path);
    } catch (const engine::ModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e = error_with({{"radius", 0}, {"iters", 3}, {"min_ncc", 0.5}, {"max_shift", 1.5}});
  EXPECT_NE(e.find(files.config_path + ": refinement: radius 0 must be in [1, 32]"), std::string::npos) << e;
  e = error_with({{"radius", 9}, {"iters", 3}, {"min_ncc", 0.5}});
  EXPECT_NE(e.find("refinement: missing key 'max_shift'"), std::string::npos) << e;
  e = error_with({{"radius", 9}, {"iters", 3}, {"min_ncc", 2}, {"max_shift", 1.5}});
  EXPECT_NE(e.find("refinement: min_ncc must be in [-1, 1]"), std::string::npos) << e;
  e = error_with("on");
  EXPECT_NE(e.find("refinement must be an object, got \"on\""), std::string::npos) << e;
}

class RefinedGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(RefinedGolden, ReproducesTheReferenceOnTheGoldenClip) {
  test::expect_refined_golden(
      EDGETAP_SOURCE_DIR, GetParam(),
      [](const TemplateAlignmentConfig& config) { return std::make_unique<engine::CpuTemplateAligner>(config); }, 2e-3f);
}

INSTANTIATE_TEST_SUITE_P(ShippedModels, RefinedGolden, ::testing::Values("edgetap-small", "edgetap-large"),
                         [](const auto& param) { return param.param == "edgetap-small" ? "small" : "large"; });

TEST(RefinedSession, TheCameraSettingChoosesAlignedOrNetworkPositions) {
  // edgetap-large declares refinement: the same camera with and without it on a texture moved by
  // a known sub-pixel shift. Aligned, the points land on the truth.
  config::CameraConfig camera;
  camera.tracker = config::TrackerKind::edgetap;
  camera.model_width = camera.model_height = kSide;
  camera.edgetap.model = std::string(EDGETAP_SOURCE_DIR) + "/models/edgetap-large.safetensors";
  pipeline::ModelCache models;
  std::string error;
  auto refined = pipeline::make_tracker(camera, models, error);
  camera.edgetap.template_refinement = false;
  auto network_only = pipeline::make_tracker(camera, models, error);
  ASSERT_TRUE(refined && network_only) << error;
  std::vector<Query> queries;
  for (int i = 0; i < 9; ++i) queries.push_back({"p" + std::to_string(i), 34.f + 28.f * (i % 3), 34.f + 28.f * (i / 3)});
  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 0.6, -0.45);
  std::vector<TrackPoint> with, without;
  for (Tracker* t : {refined.get(), network_only.get()}) {
    t->add_queries(queries);
    ASSERT_TRUE(t->push_frame(a.view(), t == refined.get() ? with : without));
    ASSERT_TRUE(t->push_frame(b.view(), t == refined.get() ? with : without));
  }
  ASSERT_EQ(with.size(), queries.size());
  int aligned = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const float tx = queries[i].x + 0.6f, ty = queries[i].y - 0.45f;
    if (with[i].x != without[i].x || with[i].y != without[i].y) {
      ++aligned;
      EXPECT_NEAR(with[i].x, tx, 0.05) << queries[i].id;
      EXPECT_NEAR(with[i].y, ty, 0.05) << queries[i].id;
    }
    EXPECT_EQ(with[i].visible, without[i].visible);  // refinement moves points, never hides them
  }
  EXPECT_GE(aligned, 7);
}

TEST(RefinedSession, ThreadsShareAFrameWithoutChangingItsResult) {
  // Enough tracks for several threads: the same outputs with one thread and with three.
  const RgbFrame a = render(texture), b = render(texture, {1, 0, 0, 1}, 0.8, -0.6);
  std::vector<engine::Point2> points;
  for (int i = 0; i < 400; ++i) points.push_back({14.f + static_cast<float>(i % 20) * 5.f, 14.f + static_cast<float>(i / 20) * 5.f});
  std::vector<std::vector<engine::TrackEstimate>> published;
  for (int threads : {1, 3}) {
    auto network = std::make_unique<test::ScriptedSession>();
    test::ScriptedSession& net = *network;
    engine::RefinedSession session(std::move(network), TemplateAlignmentConfig{}, engine::ModelConfig{}, threads);
    ASSERT_TRUE(session.push_frame(a.view()));
    const std::vector<int> h = session.add_tracks(points);
    for (const engine::Point2& p : points) net.next.push_back({p.x + 0.3f, p.y - 0.2f, 0.9f, 0.9f});
    ASSERT_TRUE(session.push_frame(b.view()));
    EXPECT_GT(session.last_accepted(), 300);
    published.emplace_back();
    for (int handle : h) published.back().push_back(session.estimate(handle));
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(published[0][i].x, published[1][i].x) << i;
    EXPECT_EQ(published[0][i].y, published[1][i].y) << i;
  }
}
