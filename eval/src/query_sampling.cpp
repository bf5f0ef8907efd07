#include "edgetap/eval/query_sampling.hpp"

namespace edgetap::eval {

const char* to_string(QueryMode mode) { return mode == QueryMode::first ? "first" : "strided"; }

std::optional<int> first_visible_frame(const GtPoint& point) {
  for (std::size_t t = 0; t < point.frames.size(); ++t) {
    if (point.frames[t].known && point.frames[t].visible) return static_cast<int>(t);
  }
  return std::nullopt;
}

std::vector<QuerySpec> queries_first(const Sequence& sequence) {
  std::vector<QuerySpec> queries;
  for (std::size_t i = 0; i < sequence.points.size(); ++i) {
    const GtPoint& p = sequence.points[i];
    queries.push_back({static_cast<int>(i), p.query_frame, p.query_x, p.query_y});
  }
  return queries;
}

std::vector<QuerySpec> queries_strided(const Sequence& sequence, int stride) {
  std::vector<QuerySpec> queries;
  for (int t = 0; t < sequence.num_frames; t += stride) {
    for (std::size_t i = 0; i < sequence.points.size(); ++i) {
      const GtSample& s = sequence.points[i].frames[static_cast<std::size_t>(t)];
      if (s.known && s.visible) queries.push_back({static_cast<int>(i), t, s.x, s.y});
    }
  }
  return queries;
}

}  // namespace edgetap::eval
