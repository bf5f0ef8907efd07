// The CPU engine with a small random-weight network: model-file validation,
// the streaming semantics, and the tracker seam. Parity with the PyTorch
// reference on the trained model is in test_engine_golden.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/kernels/cpu.hpp"
#include "edgetap/ladder/tracker_factory.hpp"
#include "support/random_network.hpp"
#include "support/temp_dir.hpp"
#include "support/textures.hpp"

using namespace edgetap;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const engine::ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelError";
  return "";
}

struct EngineFixture : ::testing::Test {
  test::TempDir dir;
  test::NetworkFiles files = test::write_random_network(dir.path().string(), 7);
  std::shared_ptr<const engine::Network> network = std::make_shared<engine::Network>(
      engine::load_network(files.weights_path, files.config_path));
  cv::Mat texture = test::random_texture(160, 160, 3);
};

}  // namespace

TEST_F(EngineFixture, LoadsAndCountsParameters) {
  EXPECT_EQ(network->config.version, "tiny-random");
  EXPECT_EQ(network->config.n_corr(), 100);
  std::size_t expected = 0;
  for (const auto& [name, t] : test::random_network_tensors(7)) expected += t.second.size();
  EXPECT_EQ(network->weights.parameter_count(), expected);
}

TEST_F(EngineFixture, TruncatedFileIsRejectedWithTheFileName) {
  const auto size = std::filesystem::file_size(files.weights_path);
  std::filesystem::resize_file(files.weights_path, size / 2);
  const std::string error = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(error.find(files.weights_path), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  std::filesystem::resize_file(files.weights_path, 5);
  EXPECT_NE(error_of([&] { engine::load_safetensors(files.weights_path); }).find("truncated"), std::string::npos);
}

TEST_F(EngineFixture, CorruptHeaderIsRejected) {
  std::ofstream(files.weights_path, std::ios::binary) << std::string("\x10\x00\x00\x00\x00\x00\x00\x00{not json!!!!!!}", 24);
  EXPECT_NE(error_of([&] { engine::load_safetensors(files.weights_path); }).find("not a JSON object"), std::string::npos);
}

TEST_F(EngineFixture, MismatchedShapeAndMissingTensorNameTheTensor) {
  auto tensors = test::random_network_tensors(7);
  tensors["tracker.corr1.weight"].first = {12, 99};
  tensors["tracker.corr1.weight"].second.resize(12 * 99);
  tensors.erase("tracker.ln_out.bias");
  test::write_safetensors(files.weights_path, tensors);
  const std::string error = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(error.find("'tracker.corr1.weight' has shape [12, 99], the model needs [12, 100]"), std::string::npos) << error;
  tensors["tracker.corr1.weight"] = test::random_network_tensors(7)["tracker.corr1.weight"];
  test::write_safetensors(files.weights_path, tensors);
  EXPECT_NE(error_of([&] { engine::load_network(files.weights_path, files.config_path); }).find("missing tensor 'tracker.ln_out.bias'"),
            std::string::npos);
}

TEST_F(EngineFixture, ConfigWithoutAKeyIsRejected) {
  std::ofstream(files.config_path) << R"({"feat_dim": 8})";
  EXPECT_NE(error_of([&] { engine::load_model_config(files.config_path); }).find("missing key 'enc_channels'"),
            std::string::npos);
}

TEST_F(EngineFixture, QueryNeighbourhoodSizesTheCorrelation) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["query_patch"] = 2;
  std::ofstream(files.config_path) << config.dump();
  const std::string error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": query_patch 2 must be odd"), std::string::npos) << error;
  config["query_patch"] = 3;
  std::ofstream(files.config_path) << config.dump();
  EXPECT_EQ(engine::load_model_config(files.config_path).n_corr(), 4 * 9 * 25);
  // The weights were made for one descriptor per level: corr1 no longer fits.
  EXPECT_NE(error_of([&] { engine::load_network(files.weights_path, files.config_path); })
                .find("'tracker.corr1.weight' has shape [12, 100], the model needs [12, 900]"),
            std::string::npos);
}

TEST_F(EngineFixture, StridesAreCheckedAndAStride2LevelNeedsItsWeights) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["strides"] = {8, 16, 32};
  std::ofstream(files.config_path) << config.dump();
  const std::string error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": this engine implements strides [4, 8, 16, 32] and [2, 4, 8, 16, 32]"),
            std::string::npos)
      << error;
  config["strides"] = {2, 4, 8, 16, 32};
  std::ofstream(files.config_path) << config.dump();
  EXPECT_EQ(engine::load_model_config(files.config_path).n_corr(), 5 * 25);
  // The weights have no stride-2 branch: the first missing tensor is named.
  const std::string missing = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(missing.find("encoder.fine2"), std::string::npos) << missing;
}

TEST_F(EngineFixture, CrossTrackLayersAreCheckedAgainstBlocksAndWeights) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["cross_after"] = nlohmann::json::array();
  std::ofstream(files.config_path) << config.dump();
  EXPECT_TRUE(engine::load_model_config(files.config_path).cross_after.empty());
  config["cross_after"] = {config["blocks"].get<int>()};
  std::ofstream(files.config_path) << config.dump();
  std::string error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": cross_after [" + std::to_string(config["blocks"].get<int>()) +
                       "] must name distinct blocks"),
            std::string::npos)
      << error;
  config["cross_after"] = {0};
  std::ofstream(files.config_path) << config.dump();
  EXPECT_EQ(engine::load_model_config(files.config_path).cross_layer(0), 0);
  // The weights were made without the layer.
  error = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(error.find("missing tensor 'tracker.cross.0.ln.weight'"), std::string::npos) << error;
}

TEST_F(EngineFixture, EntryVelocityIsReadAndCheckedWithTheFile) {
  EXPECT_FLOAT_EQ(network->config.entry_velocity, 0.f);  // absent: the previous output
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["entry_velocity"] = 0.5;
  std::ofstream(files.config_path) << config.dump();
  EXPECT_FLOAT_EQ(engine::load_model_config(files.config_path).entry_velocity, 0.5f);
  config["entry_velocity"] = "0.5";
  std::ofstream(files.config_path) << config.dump();
  std::string error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": key 'entry_velocity' must be a number"), std::string::npos) << error;
  config["entry_velocity"] = 2.5;
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": entry_velocity 2.5 must be in [0, 2]"), std::string::npos) << error;
  config["entry_velocity"] = -0.1;
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": entry_velocity -0.1 must be in [0, 2]"), std::string::npos) << error;
  config["entry_velocity"] = 1e300;  // a double, infinite as a float
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": entry_velocity 1e+300 must be in [0, 2]"), std::string::npos) << error;
}

TEST_F(EngineFixture, RecentDescriptorsAreReadAndCheckedWithTheFile) {
  EXPECT_FALSE(network->config.recent_descriptors);  // absent: the query's descriptors only
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["recent_descriptors"] = true;
  std::ofstream(files.config_path) << config.dump();
  const engine::ModelConfig on = engine::load_model_config(files.config_path);
  EXPECT_TRUE(on.recent_descriptors);
  EXPECT_EQ(on.n_corr(), 2 * 100);  // the recent set's correlations after the query's
  // The weights were made for one set: corr1 no longer fits.
  std::string error = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(error.find("'tracker.corr1.weight' has shape [12, 100], the model needs [12, 200]"), std::string::npos)
      << error;
  config["recent_descriptors"] = false;
  std::ofstream(files.config_path) << config.dump();
  EXPECT_FALSE(engine::load_model_config(files.config_path).recent_descriptors);
  config["recent_descriptors"] = 1;
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": key 'recent_descriptors' must be true or false, got 1"), std::string::npos)
      << error;
  config["recent_descriptors"] = "true";
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": key 'recent_descriptors' must be true or false"), std::string::npos) << error;
  // Sampled where a frame enters, the previous output: no entry velocity (as the Python model).
  config["recent_descriptors"] = true;
  config["entry_velocity"] = 0.5;
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": key 'recent_descriptors' needs entry_velocity 0, not 0.5"), std::string::npos)
      << error;
  config["entry_velocity"] = 0;
  std::ofstream(files.config_path) << config.dump();
  EXPECT_TRUE(engine::load_model_config(files.config_path).recent_descriptors);
}

TEST_F(EngineFixture, CrossScaleReadsFollowTheSameLevelOnesInTheReferenceOrder) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["cross_scale"] = false;  // what the exporter writes for a model without them
  std::ofstream(files.config_path) << config.dump();
  EXPECT_FALSE(engine::load_model_config(files.config_path).cross_scale);
  config["cross_scale"] = true;
  std::ofstream(files.config_path) << config.dump();
  const engine::ModelConfig c = engine::load_model_config(files.config_path);
  ASSERT_TRUE(c.cross_scale);
  // Levels fine to coarse against their own windows, then level l against l+1's, then against l-1's.
  const std::vector<engine::CorrelationRead> expected = {{0, 0, 0}, {0, 1, 1}, {0, 2, 2}, {0, 3, 3}, {0, 0, 1},
                                                         {0, 1, 2}, {0, 2, 3}, {0, 1, 0}, {0, 2, 1}, {0, 3, 2}};
  EXPECT_EQ(c.correlation_reads(), expected);
  EXPECT_EQ(c.n_corr(), 250);  // 10 reads of a 5x5 window
  // The fixture's weights are for the 4 same-level reads: the loader names the shape it needs.
  std::string error = error_of([&] { engine::load_network(files.weights_path, files.config_path); });
  EXPECT_NE(error.find("'tracker.corr1.weight' has shape [12, 100], the model needs [12, 250]"), std::string::npos)
      << error;
  config["cross_scale"] = "no";
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": key 'cross_scale' must be true or false, got \"no\""), std::string::npos)
      << error;
}

TEST_F(EngineFixture, CrossScaleReadsCorrelateALevelsDescriptorsWithItsNeighboursWindows) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["cross_scale"] = true;
  std::ofstream(files.config_path) << config.dump();
  auto tensors = test::random_network_tensors(7);
  auto& corr1 = tensors["tracker.corr1.weight"];  // [12, 100] -> [12, 250]
  corr1.first = {12, 250};
  corr1.second.resize(12 * 250, 0.01f);
  test::write_safetensors(files.weights_path, tensors);
  const engine::Network scale_net = engine::load_network(files.weights_path, files.config_path);
  engine::StreamingSession session(scale_net);
  const auto f0 = test::crop_frame(texture, 0, 0, 96, 64, 0), f1 = test::crop_frame(texture, 3, 2, 96, 64, 1);
  ASSERT_TRUE(session.push_frame(f0.view()).is_ok());
  const engine::Point2 query{40.f, 30.f};
  const int h = session.add_tracks(std::vector<engine::Point2>{query})[0];
  ASSERT_TRUE(session.push_frame(f1.view()).is_ok());
  // Frame 1's first iteration enters at the query point (entry_velocity 0, one output so far). Each
  // read against a window computed here from frame 1's pyramid, in correlation_reads' order.
  const engine::ModelConfig& c = scale_net.config;
  const std::vector<float>& corr = session.last_first_correlation();
  ASSERT_EQ(corr.size(), static_cast<std::size_t>(c.n_corr()));
  const std::vector<float>& descs = session.descriptors(h);
  const std::size_t qc = static_cast<std::size_t>(c.query_cells()), cells = static_cast<std::size_t>(c.window_cells());
  const auto reads = c.correlation_reads();
  for (std::size_t r = 0; r < reads.size(); ++r) {
    const engine::FeatureMap& f = session.pyramid().levels[static_cast<std::size_t>(reads[r].window_level)];
    const float s = static_cast<float>(c.strides[static_cast<std::size_t>(reads[r].window_level)]);
    std::vector<float> want(qc * cells);
    kernels::cpu::window_correlation_hwc(f.data.data(), f.height, f.width, f.channels, query.x / s, query.y / s,
                                         c.radius, descs.data() + static_cast<std::size_t>(reads[r].descriptor_level) * qc * c.feat_dim,
                                         static_cast<int>(qc), want.data());
    for (std::size_t j = 0; j < want.size(); ++j) {
      ASSERT_EQ(corr[r * qc * cells + j], want[j]) << "read " << r << " value " << j;
    }
  }
  // A cross read differs from its descriptors' same-level read: another level's window.
  EXPECT_FALSE(std::equal(corr.begin(), corr.begin() + static_cast<std::ptrdiff_t>(cells), corr.begin() + static_cast<std::ptrdiff_t>(4 * cells)));
}

TEST_F(EngineFixture, RecentDescriptorsAreSampledAtTheLastOutputAndCorrelatedAfterTheQueryOnes) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["recent_descriptors"] = true;
  std::ofstream(files.config_path) << config.dump();
  auto tensors = test::random_network_tensors(7);
  auto& corr1 = tensors["tracker.corr1.weight"];  // [12, 100] -> [12, 200]: both sets' correlations
  corr1.first = {12, 200};
  corr1.second.resize(12 * 200);
  for (std::size_t i = 12 * 100; i < corr1.second.size(); ++i) corr1.second[i] = 0.01f * static_cast<float>(i % 7) - 0.03f;
  test::write_safetensors(files.weights_path, tensors);
  const engine::Network recent = engine::load_network(files.weights_path, files.config_path);
  engine::StreamingSession a(recent);
  const auto f0 = test::crop_frame(texture, 0, 0, 96, 64, 0), f1 = test::crop_frame(texture, 3, 2, 96, 64, 1),
             f2 = test::crop_frame(texture, 6, 4, 96, 64, 2);
  ASSERT_TRUE(a.push_frame(f0.view()).is_ok());
  const int h = a.add_tracks(std::vector<engine::Point2>{{40.f, 30.f}})[0];
  EXPECT_EQ(a.recent_descriptors(h), a.descriptors(h));  // re-sampled at the query point
  ASSERT_TRUE(a.push_frame(f1.view()).is_ok());
  // Frame 1 correlates the query frame's descriptors at the query point twice.
  const int half = recent.config.n_corr() / 2;
  std::vector<float> corr = a.last_first_correlation();
  ASSERT_EQ(corr.size(), static_cast<std::size_t>(2 * half));
  for (int i = 0; i < half; ++i) ASSERT_EQ(corr[i], corr[half + i]) << i;
  // Now they are frame 1's at its output: what a track started there samples.
  const engine::TrackEstimate out1 = a.estimate(h);
  engine::StreamingSession b(recent);
  ASSERT_TRUE(b.push_frame(f1.view()).is_ok());
  const int hb = b.add_tracks(std::vector<engine::Point2>{{out1.x, out1.y}})[0];
  EXPECT_EQ(a.recent_descriptors(h), b.descriptors(hb));
  EXPECT_NE(a.recent_descriptors(h), a.descriptors(h));
  ASSERT_TRUE(a.push_frame(f2.view()).is_ok());
  corr = a.last_first_correlation();
  EXPECT_FALSE(std::equal(corr.begin(), corr.begin() + half, corr.begin() + half));
}

TEST_F(EngineFixture, QueryStepReturnsTheQueryAndStreamingIsDeterministic) {
  engine::StreamingSession a(*network), b(*network);
  const auto f0 = test::crop_frame(texture, 0, 0, 96, 64, 0);
  ASSERT_TRUE(a.push_frame(f0.view()).is_ok());
  ASSERT_TRUE(b.push_frame(f0.view()).is_ok());
  const std::vector<engine::Point2> points = {{10.f, 20.f}, {50.5f, 33.25f}};
  const auto ha = a.add_tracks(points), hb = b.add_tracks(points);
  EXPECT_FLOAT_EQ(a.estimate(ha[1]).x, 50.5f);
  EXPECT_FLOAT_EQ(a.estimate(ha[1]).visible, 1.f);
  for (int t = 1; t < 8; ++t) {
    const auto f = test::crop_frame(texture, t, t, 96, 64, t);
    ASSERT_TRUE(a.push_frame(f.view()).is_ok());
    ASSERT_TRUE(b.push_frame(f.view()).is_ok());
    for (std::size_t i = 0; i < 2; ++i) {
      const auto& ea = a.estimate(ha[i]);
      ASSERT_TRUE(std::isfinite(ea.x) && std::isfinite(ea.y)) << "frame " << t;
      EXPECT_EQ(ea.x, b.estimate(hb[i]).x);
      EXPECT_GE(ea.visible, 0.f);
      EXPECT_LE(ea.confidence, 1.f);
    }
  }
}

TEST_F(EngineFixture, ATrackDoesNotDependOnItsNeighbours) {
  // Tracks are independent: adding and removing others leaves one's estimates unchanged.
  engine::StreamingSession alone(*network), crowd(*network);
  const auto f0 = test::crop_frame(texture, 0, 0, 64, 64, 0);
  alone.push_frame(f0.view());
  crowd.push_frame(f0.view());
  const engine::Point2 p{30.f, 31.f};
  const int h_alone = alone.add_tracks(std::vector<engine::Point2>{p})[0];
  const auto crowd_handles = crowd.add_tracks(std::vector<engine::Point2>{{5.f, 5.f}, p, {60.f, 2.f}});
  for (int t = 1; t < 6; ++t) {
    const auto f = test::crop_frame(texture, 2 * t, t, 64, 64, t);
    alone.push_frame(f.view());
    crowd.push_frame(f.view());
    if (t == 2) {
      crowd.remove_track(crowd_handles[0]);
      EXPECT_FALSE(crowd.alive(crowd_handles[0]));
    }
    if (t == 3) crowd.add_tracks(std::vector<engine::Point2>{{12.f, 40.f}});
    EXPECT_NEAR(alone.estimate(h_alone).x, crowd.estimate(crowd_handles[1]).x, 1e-4) << "frame " << t;
    EXPECT_NEAR(alone.estimate(h_alone).y, crowd.estimate(crowd_handles[1]).y, 1e-4) << "frame " << t;
  }
}

TEST_F(EngineFixture, RejectsFramesThatAreNotMultiplesOf32) {
  engine::StreamingSession s(*network);
  const auto f = test::crop_frame(texture, 0, 0, 100, 64, 0);
  EXPECT_EQ(s.push_frame(f.view()).code(), Status::Code::bad_frame);
}

TEST_F(EngineFixture, TrackerSeamKeepsIdsAndLocatesEarlyQueriesInTheFirstFrame) {
  engine::EdgeTapTracker tracker(network);
  tracker.add_queries(std::vector<Query>{{"a", 10.f, 12.f}});
  std::vector<TrackPoint> out;
  ASSERT_TRUE(tracker.push_frame(test::crop_frame(texture, 0, 0, 64, 64, 0).view(), out).is_ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "a");
  EXPECT_FLOAT_EQ(out[0].x, 10.f);
  EXPECT_TRUE(out[0].visible);
  tracker.add_queries(std::vector<Query>{{"b", 40.f, 40.f}});
  ASSERT_TRUE(tracker.push_frame(test::crop_frame(texture, 1, 0, 64, 64, 1).view(), out).is_ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].id, "b");
  EXPECT_EQ(tracker.remove_queries(std::vector<std::string>{"a", "zz"}), 1u);
  ASSERT_TRUE(tracker.push_frame(test::crop_frame(texture, 2, 0, 64, 64, 2).view(), out).is_ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "b");
}

TEST_F(EngineFixture, VisibleRuleIsReadAndCheckedWithTheFile) {
  EXPECT_EQ(network->config.visible_rule, engine::VisibleRule::visibility);  // absent: "vis" at 0.5
  EXPECT_FLOAT_EQ(network->config.visible_threshold, 0.5f);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["visible_rule"] = "vis*conf";
  config["vis_threshold"] = 0.3;
  std::ofstream(files.config_path) << config.dump();
  const engine::ModelConfig c = engine::load_model_config(files.config_path);
  EXPECT_EQ(c.visible_rule, engine::VisibleRule::visibility_times_confidence);
  EXPECT_FLOAT_EQ(c.visible_threshold, 0.3f);
  EXPECT_FLOAT_EQ(c.visible_score(0.8f, 0.5f), 0.4f);
  config["visible_rule"] = "conf";
  std::ofstream(files.config_path) << config.dump();
  std::string error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": visible_rule 'conf' must be"), std::string::npos) << error;
  config["visible_rule"] = "vis";
  config["vis_threshold"] = 1.5;
  std::ofstream(files.config_path) << config.dump();
  error = error_of([&] { engine::load_model_config(files.config_path); });
  EXPECT_NE(error.find(files.config_path + ": vis_threshold must be in [0, 1]"), std::string::npos) << error;
}

// The tracker publishes visible = the model's visible score >= its threshold (the
// model's own unless the camera sets one), from the session's estimates.
TEST_F(EngineFixture, TrackerAppliesTheModelsVisibleRule) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["visible_rule"] = "vis*conf";
  config["vis_threshold"] = 0.3;
  std::ofstream(files.config_path) << config.dump();
  auto calibrated = std::make_shared<const engine::Network>(engine::load_network(files.weights_path, files.config_path));
  engine::StreamingSession session(*calibrated);
  engine::EdgeTapTracker own(calibrated), strict(calibrated, 0.9f);
  const std::vector<engine::Point2> points = {{10.f, 12.f}, {40.f, 40.f}, {55.f, 8.f}, {30.f, 50.f}};
  std::vector<Query> queries;
  for (std::size_t i = 0; i < points.size(); ++i) queries.push_back({std::to_string(i), points[i].x, points[i].y});
  own.add_queries(queries);
  strict.add_queries(queries);
  std::vector<TrackPoint> out_own, out_strict;
  std::vector<int> handles;
  int shown = 0, decided_by_confidence = 0;
  for (int t = 0; t < 6; ++t) {
    const auto f = test::crop_frame(texture, 3 * t, 2 * t, 64, 64, t);
    ASSERT_TRUE(session.push_frame(f.view()).is_ok());
    if (t == 0) handles = session.add_tracks(points);
    ASSERT_TRUE(own.push_frame(f.view(), out_own).is_ok());
    ASSERT_TRUE(strict.push_frame(f.view(), out_strict).is_ok());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const engine::TrackEstimate& e = session.estimate(handles[i]);
      const float score = e.visible * e.confidence;
      if (e.visible >= 0.3f && score < 0.3f) ++decided_by_confidence;
      EXPECT_EQ(out_own[i].visible, score >= 0.3f) << "frame " << t << " point " << i;
      EXPECT_EQ(out_strict[i].visible, score >= 0.9f) << "frame " << t << " point " << i;
      EXPECT_FLOAT_EQ(out_own[i].x, e.x);
      if (out_own[i].visible) ++shown;
    }
  }
  EXPECT_GT(shown, 0);
  EXPECT_GT(decided_by_confidence, 0);  // the rule, not the visibility alone, decided some points
}

namespace {

// A safetensors file holding only `header` (its data section empty).
void write_header_only(const std::string& path, const std::string& header) {
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  std::ofstream(path, std::ios::binary) << length << header;
}

}  // namespace

TEST_F(EngineFixture, AShapeWhoseSizeOverflowsIsAModelErrorNamingTheFileAndTensor) {
  // 2^62 F32 elements are 2^64 bytes, which wraps to the 0 bytes the offsets give.
  for (const std::string shape : {"[4611686018427387904]", "[2147483648, 2147483648]", "[4294967296, 4294967296, 4]"}) {
    write_header_only(files.weights_path,
                      R"({"huge": {"dtype": "F32", "shape": )" + shape + R"(, "data_offsets": [0, 0]}})");
    std::string error;
    try {
      engine::load_safetensors(files.weights_path);
      ADD_FAILURE() << "accepted shape " << shape;
    } catch (const engine::ModelError& e) {
      error = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "shape " << shape << " threw " << e.what() << ", not a ModelError";
    }
    EXPECT_NE(error.find(files.weights_path + ": tensor 'huge'"), std::string::npos) << error;
    EXPECT_NE(error.find("too large"), std::string::npos) << error;
  }
}

TEST_F(EngineFixture, ADeeplyNestedModelFileIsAModelErrorNotACrash) {
  const std::string nested = std::string(100000, '[') + std::string(100000, ']');
  std::ofstream(files.config_path) << R"({"recent_descriptors": )" << nested << "}";
  EXPECT_NE(error_of([&] { engine::load_model_config(files.config_path); }).find("nested more than"),
            std::string::npos);
  write_header_only(files.weights_path, R"({"__metadata__": )" + nested + "}");
  EXPECT_NE(error_of([&] { engine::load_safetensors(files.weights_path); }).find("nested more than"),
            std::string::npos);
}

TEST_F(EngineFixture, ASizeMultipleOfZeroIsRejected) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  (config.contains("config") ? config["config"] : config)["size_multiple"] = 0;
  std::ofstream(files.config_path) << config.dump();
  EXPECT_NE(error_of([&] { engine::load_model_config(files.config_path); }).find("size_multiple 0 must be in"),
            std::string::npos);
}

TEST_F(EngineFixture, ModelCacheTurnsEveryLoadingFailureIntoTheCamerasError) {
  pipeline::ModelCache cache;
  std::string error;
  write_header_only(files.weights_path, R"({"huge": {"dtype": "F32", "shape": [4611686018427387904], "data_offsets": [0, 0]}})");
  EXPECT_EQ(cache.get(files.weights_path, error), nullptr);
  EXPECT_NE(error.find("tensor 'huge'"), std::string::npos) << error;

  // An exception the loader does not turn into a ModelError (a JSON type error here).
  nlohmann::json config = nlohmann::json::parse(std::ifstream(files.config_path));
  config["version"] = 5;
  std::ofstream(files.config_path) << config.dump();
  error.clear();
  EXPECT_EQ(cache.get(files.weights_path, error), nullptr);
  EXPECT_NE(error.find("cannot load the edgetap model " + files.weights_path), std::string::npos) << error;
}
