#include "edgetap/eval/tapvid_metrics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace edgetap::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(std::int64_t numerator, std::int64_t denominator) {
  return denominator == 0 ? kNaN : static_cast<double>(numerator) / static_cast<double>(denominator);
}

void check_shapes(const Sequence& sequence, std::span<const QuerySpec> queries, const Predictions& predictions) {
  if (predictions.size() != queries.size()) throw std::invalid_argument("predictions: one entry per query expected");
  for (const auto& track : predictions) {
    if (static_cast<int>(track.size()) != sequence.num_frames) {
      throw std::invalid_argument("predictions: one sample per frame expected");
    }
  }
}

}  // namespace

TapVidCounts& TapVidCounts::operator+=(const TapVidCounts& other) {
  scored += other.scored;
  occlusion_correct += other.occlusion_correct;
  gt_visible += other.gt_visible;
  for (std::size_t i = 0; i < kThresholdsPx.size(); ++i) {
    within[i] += other.within[i];
    true_positives[i] += other.true_positives[i];
    false_positives[i] += other.false_positives[i];
  }
  return *this;
}

bool is_scored_frame(QueryMode mode, int query_frame, int t) {
  return mode == QueryMode::first ? t > query_frame : t != query_frame;
}

TapVidCounts count_tapvid(const Sequence& sequence, std::span<const QuerySpec> queries,
                          const Predictions& predictions, QueryMode mode) {
  check_shapes(sequence, queries, predictions);
  // Only differences are compared, so scaling them is the same as scaling
  // both positions to 256x256 (the half-pixel offset cancels).
  const double sx = kMetricSize / sequence.width;
  const double sy = kMetricSize / sequence.height;
  TapVidCounts counts;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const GtPoint& point = sequence.points.at(static_cast<std::size_t>(queries[q].point));
    for (int t = 0; t < sequence.num_frames; ++t) {
      const GtSample& gt = point.frames[static_cast<std::size_t>(t)];
      if (!gt.known || !is_scored_frame(mode, queries[q].frame, t)) continue;
      const PredSample& pred = predictions[q][static_cast<std::size_t>(t)];
      ++counts.scored;
      counts.occlusion_correct += pred.visible == gt.visible ? 1 : 0;
      counts.gt_visible += gt.visible ? 1 : 0;
      const double dx = (pred.x - gt.x) * sx;
      const double dy = (pred.y - gt.y) * sy;
      const double squared = dx * dx + dy * dy;
      for (std::size_t i = 0; i < kThresholdsPx.size(); ++i) {
        // An occluded point may have no position: it is never within any threshold.
        const bool within = gt.has_xy && squared < kThresholdsPx[i] * kThresholdsPx[i];
        const bool correct = within && gt.visible;
        counts.within[i] += correct ? 1 : 0;
        counts.true_positives[i] += correct && pred.visible ? 1 : 0;
        counts.false_positives[i] += pred.visible && (!gt.visible || !within) ? 1 : 0;
      }
    }
  }
  return counts;
}

TapVidScores tapvid_scores(const TapVidCounts& counts) {
  TapVidScores scores;
  scores.occlusion_accuracy = ratio(counts.occlusion_correct, counts.scored);
  scores.average_jaccard = 0;
  scores.average_within = 0;
  for (std::size_t i = 0; i < kThresholdsPx.size(); ++i) {
    scores.within[i] = ratio(counts.within[i], counts.gt_visible);
    scores.jaccard[i] = ratio(counts.true_positives[i], counts.gt_visible + counts.false_positives[i]);
    scores.average_jaccard += scores.jaccard[i] / static_cast<double>(kThresholdsPx.size());
    scores.average_within += scores.within[i] / static_cast<double>(kThresholdsPx.size());
  }
  return scores;
}

PckCounts count_pck(const Sequence& sequence, std::span<const QuerySpec> queries, const Predictions& predictions,
                    QueryMode mode, double alpha) {
  check_shapes(sequence, queries, predictions);
  PckCounts counts;
  if (sequence.mask_area.empty()) return counts;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const GtPoint& point = sequence.points.at(static_cast<std::size_t>(queries[q].point));
    for (int t = 0; t < sequence.num_frames; ++t) {
      const GtSample& gt = point.frames[static_cast<std::size_t>(t)];
      const double area = sequence.mask_area[static_cast<std::size_t>(t)];
      if (!gt.known || !gt.visible || area <= 0 || !is_scored_frame(mode, queries[q].frame, t)) continue;
      const PredSample& pred = predictions[q][static_cast<std::size_t>(t)];
      const double distance = std::hypot(pred.x - gt.x, pred.y - gt.y);
      ++counts.scored;
      counts.correct += distance < alpha * std::sqrt(area) ? 1 : 0;
    }
  }
  return counts;
}

double pck_score(const PckCounts& counts) { return ratio(counts.correct, counts.scored); }

double mean_defined(std::span<const double> values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++n;
  }
  return n == 0 ? kNaN : sum / n;
}

TapVidScores mean_scores(std::span<const TapVidScores> scores) {
  auto mean_of = [&](auto field) {
    std::vector<double> values;
    for (const TapVidScores& s : scores) values.push_back(field(s));
    return mean_defined(values);
  };
  TapVidScores mean;
  mean.average_jaccard = mean_of([](const TapVidScores& s) { return s.average_jaccard; });
  mean.average_within = mean_of([](const TapVidScores& s) { return s.average_within; });
  mean.occlusion_accuracy = mean_of([](const TapVidScores& s) { return s.occlusion_accuracy; });
  for (std::size_t i = 0; i < kThresholdsPx.size(); ++i) {
    mean.jaccard[i] = mean_of([i](const TapVidScores& s) { return s.jaccard[i]; });
    mean.within[i] = mean_of([i](const TapVidScores& s) { return s.within[i]; });
  }
  return mean;
}

}  // namespace edgetap::eval
