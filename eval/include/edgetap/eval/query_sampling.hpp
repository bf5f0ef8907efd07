// Where queries come from, following the TAP-Vid reference
// (tapnet/tapvid/evaluation_datasets.py, sample_queries_first and
// sample_queries_strided), with one extension: frames whose ground truth is
// unknown (null) are never chosen.
#pragma once

#include <optional>
#include <vector>

#include "edgetap/eval/sequence.hpp"

namespace edgetap::eval {

enum class QueryMode { first, strided };
const char* to_string(QueryMode mode);

// One query: a ground-truth point, the frame it is given in and where.
struct QuerySpec {
  int point = 0;  // index into Sequence::points
  int frame = 0;
  double x = 0;
  double y = 0;
};

// The first frame where the point is known and visible, if any.
std::optional<int> first_visible_frame(const GtPoint& point);

// Query-first: one query per point, the query gt.json declares (which is the
// first visible frame unless the file says otherwise).
std::vector<QuerySpec> queries_first(const Sequence& sequence);

// Strided: for every frame t = 0, stride, 2*stride, ... one query per point
// known and visible at t, located at its ground-truth position there.
// Ordered by frame, then point, as the reference concatenates them.
std::vector<QuerySpec> queries_strided(const Sequence& sequence, int stride = 5);

}  // namespace edgetap::eval
