// Builders for small hand-made ground truth and predictions.
#pragma once

#include <vector>

#include "edgetap/eval/sequence.hpp"
#include "edgetap/eval/tapvid_metrics.hpp"

namespace edgetap::test {

inline eval::GtSample seen(double x, double y) { return {true, true, true, x, y}; }
inline eval::GtSample hidden(double x, double y) { return {true, false, true, x, y}; }
inline eval::GtSample hidden_nowhere() { return {true, false, false, 0, 0}; }
inline eval::GtSample unknown() { return {}; }

inline eval::PredSample shown_at(double x, double y) { return {x, y, true}; }
inline eval::PredSample occluded_at(double x, double y) { return {x, y, false}; }

inline eval::Sequence one_point(int width, int height, int query_frame, std::vector<eval::GtSample> frames) {
  eval::Sequence s;
  s.name = "case";
  s.width = width;
  s.height = height;
  s.num_frames = static_cast<int>(frames.size());
  eval::GtPoint p;
  p.id = "p0";
  p.query_frame = query_frame;
  p.query_x = frames[static_cast<std::size_t>(query_frame)].x;
  p.query_y = frames[static_cast<std::size_t>(query_frame)].y;
  p.frames = std::move(frames);
  s.points.push_back(p);
  return s;
}

}  // namespace edgetap::test
