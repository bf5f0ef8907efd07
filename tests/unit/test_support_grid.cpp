// Support tracks: a grid of unpublished points started at a session's first
// frame as context for the cross-track layers (SupportGridSession), declared by
// a model's JSON or chosen by a camera's edgetap.support_grid.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgetap/engine/edgetap_tracker.hpp"
#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/ladder/tracker_factory.hpp"
#include "support/moved_texture.hpp"
#include "support/temp_dir.hpp"

using namespace edgetap;
using test::render;
using test::RgbFrame;
using test::texture;

namespace {

// A committed tiny network with a cross-track layer: tracks see each other.
const std::string kTinyCross = std::string(EDGETAP_SOURCE_DIR) + "/tests/data/golden/edgetap-tiny-cross";

std::shared_ptr<const engine::Network> tiny_cross() {
  return std::make_shared<const engine::Network>(
      engine::load_network(kTinyCross + ".safetensors", kTinyCross + ".json"));
}

// Frames of the smooth texture drifting right and down, then turning a little.
std::vector<RgbFrame> drifting_frames(int n) {
  std::vector<RgbFrame> frames;
  for (int t = 0; t < n; ++t) {
    const double a = 0.01 * t;
    frames.push_back(render(texture, {std::cos(a), -std::sin(a), std::sin(a), std::cos(a)}, 1.3 * t, 0.7 * t));
  }
  return frames;
}

const std::vector<engine::Point2> kCallerPoints{{40.f, 52.f}, {90.5f, 70.25f}};

// The caller's estimates in every frame after the first, through `session`.
std::vector<engine::TrackEstimate> caller_estimates(engine::TrackingSession& session,
                                                    const std::vector<RgbFrame>& frames,
                                                    const std::vector<engine::Point2>& before_caller = {}) {
  std::vector<engine::TrackEstimate> out;
  std::vector<int> handles;
  for (std::size_t t = 0; t < frames.size(); ++t) {
    EXPECT_TRUE(session.push_frame(frames[t].view()));
    if (t == 0) {
      if (!before_caller.empty()) session.add_tracks(before_caller);
      handles = session.add_tracks(kCallerPoints);
      continue;
    }
    for (int h : handles) out.push_back(session.estimate(h));
  }
  return out;
}

}  // namespace

TEST(SupportGrid, PointsAreTheCellCentresRowByRow) {
  const std::vector<engine::Point2> g = engine::support_grid_points(2, 64, 32);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_FLOAT_EQ(g[0].x, 15.5f);
  EXPECT_FLOAT_EQ(g[0].y, 7.5f);
  EXPECT_FLOAT_EQ(g[1].x, 47.5f);
  EXPECT_FLOAT_EQ(g[1].y, 7.5f);
  EXPECT_FLOAT_EQ(g[2].x, 15.5f);
  EXPECT_FLOAT_EQ(g[2].y, 23.5f);
  EXPECT_EQ(engine::support_grid_points(8, 256, 256).size(), 64u);
}

TEST(SupportGrid, SessionTracksTheGridFromTheFirstFrameAndHandsOutOnlyTheCallersTracks) {
  const auto network = tiny_cross();
  const std::vector<RgbFrame> frames = drifting_frames(6);
  engine::SupportGridSession supported(std::make_unique<engine::StreamingSession>(*network), 3);
  const std::vector<engine::TrackEstimate> with = caller_estimates(supported, frames);
  ASSERT_EQ(supported.support_handles().size(), 9u);

  // The same as a plain session given the grid's points in the first frame, before the caller's.
  engine::StreamingSession explicit_grid(*network);
  const std::vector<engine::TrackEstimate> same =
      caller_estimates(explicit_grid, frames, engine::support_grid_points(3, test::kTextureSide, test::kTextureSide));
  // And not what the caller's tracks do alone: the cross-track layer sees the grid.
  engine::StreamingSession alone(*network);
  const std::vector<engine::TrackEstimate> without = caller_estimates(alone, frames);

  ASSERT_EQ(with.size(), same.size());
  bool differs = false;
  for (std::size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(with[i].x, same[i].x) << i;
    EXPECT_EQ(with[i].y, same[i].y) << i;
    EXPECT_EQ(with[i].visible, same[i].visible) << i;
    EXPECT_EQ(with[i].confidence, same[i].confidence) << i;
    differs = differs || with[i].x != without[i].x || with[i].y != without[i].y;
  }
  EXPECT_TRUE(differs);
}

TEST(SupportGrid, TheTrackerPublishesOnlyItsQueries) {
  const auto network = tiny_cross();
  engine::EdgeTapTracker tracker(network,
                                 std::make_unique<engine::SupportGridSession>(
                                     std::make_unique<engine::StreamingSession>(*network), 4));
  tracker.add_queries(std::vector<Query>{{"a", 40.f, 52.f}, {"b", 90.f, 70.f}});
  std::vector<TrackPoint> out;
  for (const RgbFrame& f : drifting_frames(3)) {
    ASSERT_TRUE(tracker.push_frame(f.view(), out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].id, "a");
    EXPECT_EQ(out[1].id, "b");
  }
  EXPECT_EQ(tracker.size(), 2u);
}

TEST(SupportGrid, ModelFilesDeclareItAndBadValuesNameTheKey) {
  test::TempDir dir;
  const std::string path = (dir.path() / "m.json").string();
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kTinyCross + ".json"));
  std::ofstream(path) << config.dump();
  EXPECT_EQ(engine::load_model_config(path).support_grid, 0);  // absent: none
  const auto load_with = [&](const nlohmann::json& side) {
    config["support_grid"] = side;
    std::ofstream(path) << config.dump();
    try {
      return std::to_string(engine::load_model_config(path).support_grid);
    } catch (const engine::ModelError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(load_with(8), "8");
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(33), nlohmann::json("8"), nlohmann::json(2.5)}) {
    const std::string e = load_with(bad);
    EXPECT_NE(e.find(path + ": support_grid " + bad.dump() + " must be an integer in [0, 32]"), std::string::npos)
        << e;
  }
}

TEST(SupportGrid, TheModelsDeclarationIsTheDefaultAndTheCameraSettingOverridesIt) {
  // A copy of the tiny network whose JSON declares a 3 x 3 grid.
  test::TempDir dir;
  const std::string declared = (dir.path() / "declared").string();
  std::filesystem::copy_file(kTinyCross + ".safetensors", declared + ".safetensors");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kTinyCross + ".json"));
  config["support_grid"] = 3;
  config["weights"] = "declared.safetensors";
  std::ofstream(declared + ".json") << config.dump();

  const auto tracks = [&](const std::string& model, std::optional<int> support_grid) {
    config::CameraConfig camera;
    camera.tracker = config::TrackerKind::edgetap;
    camera.model_width = camera.model_height = test::kTextureSide;
    camera.edgetap.model = model + ".safetensors";
    camera.edgetap.support_grid = support_grid;
    pipeline::ModelCache models;
    std::string error;
    auto tracker = pipeline::make_tracker(camera, models, error);
    EXPECT_TRUE(tracker) << error;
    std::vector<TrackPoint> out, all;
    if (!tracker) return all;
    tracker->add_queries(std::vector<Query>{{"a", 40.f, 52.f}, {"b", 90.5f, 70.25f}});
    for (const RgbFrame& f : drifting_frames(4)) {
      EXPECT_TRUE(tracker->push_frame(f.view(), out));
      all.insert(all.end(), out.begin(), out.end());
    }
    return all;
  };
  const auto same_positions = [](const std::vector<TrackPoint>& a, const std::vector<TrackPoint>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].x != b[i].x || a[i].y != b[i].y) return false;
    }
    return true;
  };
  const auto by_declaration = tracks(declared, std::nullopt);
  ASSERT_EQ(by_declaration.size(), 8u);
  EXPECT_TRUE(same_positions(by_declaration, tracks(kTinyCross, 3)));       // the camera asks for the same grid
  EXPECT_TRUE(same_positions(tracks(declared, 0), tracks(kTinyCross, std::nullopt)));  // 0 turns it off
  EXPECT_FALSE(same_positions(by_declaration, tracks(kTinyCross, std::nullopt)));
}
