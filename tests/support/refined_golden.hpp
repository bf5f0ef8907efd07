// The golden clip's network outputs through a RefinedSession, compared with
// refined_xy: the same outputs refined by training/edgetap/refine.py
// (training/export.py, declare_refinement.py). Shared by the CPU aligner's
// test and the GPU aligner's; header-only (core and GoogleTest).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgetap/engine/model_config.hpp"
#include "edgetap/engine/refined_session.hpp"
#include "edgetap/engine/safetensors.hpp"
#include "support/scripted_session.hpp"

namespace edgetap::test {

using AlignerFactory = std::function<std::unique_ptr<engine::TemplateAligner>(const engine::TemplateAlignmentConfig&)>;

// `source`: the source tree; `model`: a shipped model's stem (edgetap-small,
// edgetap-large). Every published position of a started track must lie within
// `tolerance` px of refined_xy.
inline void expect_refined_golden(const std::string& source, const std::string& model_name,
                                  const AlignerFactory& make_aligner, float tolerance) {
  const engine::ModelConfig model = engine::load_model_config(source + "/models/" + model_name + ".json");
  ASSERT_TRUE(model.refinement.has_value());
  const engine::TensorMap g = engine::load_safetensors(source + "/tests/data/golden/" + model_name + "-golden.safetensors");
  const engine::Tensor& frames = g.at("frames");
  const engine::Tensor& refined = g.at("refined_xy");
  const engine::Tensor& out_xy = g.at("out_xy");
  const engine::Tensor& out_vis = g.at("out_vis");
  const engine::Tensor& out_conf = g.at("out_conf");
  const engine::Tensor& query_t = g.at("query_t");
  const engine::Tensor& query_xy = g.at("query_xy");
  const int T = static_cast<int>(frames.shape[0]), H = static_cast<int>(frames.shape[1]),
            W = static_cast<int>(frames.shape[2]), N = static_cast<int>(query_t.shape[0]);
  auto network = std::make_unique<ScriptedSession>();
  ScriptedSession& net = *network;
  engine::RefinedSession session(std::move(network), make_aligner(*model.refinement), model);
  std::vector<int> handle(static_cast<std::size_t>(N), -1);
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(H) * W * 3);
  int moved = 0;
  for (int t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(frames.data[t * rgb.size() + i]);
    // The network's outputs of this frame, by handle (handles are given in query order, as the tracks start).
    net.next.assign(static_cast<std::size_t>(N), engine::TrackEstimate{});
    for (int n = 0; n < N; ++n) {
      const std::size_t at = static_cast<std::size_t>(t * N + n);
      const int h = handle[static_cast<std::size_t>(n)];
      if (h >= 0) {
        net.next[static_cast<std::size_t>(h)] = {out_xy.data[2 * at], out_xy.data[2 * at + 1], out_vis.data[at],
                                                 out_conf.data[at]};
      }
    }
    ASSERT_TRUE(session.push_frame({rgb.data(), W, H, static_cast<std::size_t>(W) * 3}));
    for (int n = 0; n < N; ++n) {
      if (static_cast<int>(query_t.data[static_cast<std::size_t>(n)]) != t) continue;
      const engine::Point2 q{query_xy.data[2 * n], query_xy.data[2 * n + 1]};
      handle[static_cast<std::size_t>(n)] = session.add_tracks(std::span(&q, 1))[0];
    }
    for (int n = 0; n < N; ++n) {
      if (static_cast<int>(query_t.data[static_cast<std::size_t>(n)]) >= t) continue;
      const std::size_t at = static_cast<std::size_t>(t * N + n);
      const engine::TrackEstimate& e = session.estimate(handle[static_cast<std::size_t>(n)]);
      EXPECT_NEAR(e.x, refined.data[2 * at], tolerance) << "frame " << t << " track " << n;
      EXPECT_NEAR(e.y, refined.data[2 * at + 1], tolerance) << "frame " << t << " track " << n;
      if (std::abs(refined.data[2 * at] - out_xy.data[2 * at]) > 1e-4f) ++moved;
    }
  }
  EXPECT_GT(moved, 5);  // the clip exercises the alignment, not only its rejections
}

}  // namespace edgetap::test
