// The TAP-Vid metrics, as the reference defines them
// (tapnet/tapvid/evaluation_datasets.py, compute_tapvid_metrics):
//  - positions are compared after scaling the frame to 256x256;
//  - a prediction is within threshold d when its squared distance to the
//    ground truth is strictly below d^2, for d in 1, 2, 4, 8, 16 px;
//  - <delta_avg: fraction of ground-truth-visible points within d, whatever the
//    predicted visibility, averaged over d;
//  - Jaccard at d: true positives (visible in both, within d) over ground-truth
//    visible points plus false positives (predicted visible where the ground
//    truth is occluded, or farther than d); AJ averages it over d;
//  - OA: fraction of frames whose predicted visibility equals the ground truth;
//  - query-first scores the frames after the query frame, strided every frame
//    but the query frame.
// Counts are summed over one sequence and turned into scores there; a dataset's
// score is the plain mean of its sequences' scores. The one extension: frames
// whose ground truth is unknown (null) are not scored at all.
// Also PCK@alpha: a ground-truth-visible point is correct when it lies strictly
// closer than alpha * sqrt(mask area) in the sequence's own pixels.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "edgetap/eval/query_sampling.hpp"
#include "edgetap/eval/sequence.hpp"

namespace edgetap::eval {

inline constexpr double kMetricSize = 256.0;                       // TAP-Vid's frame size
inline constexpr std::array<double, 5> kThresholdsPx = {1, 2, 4, 8, 16};  // at kMetricSize
inline constexpr double kPckAlpha = 0.2;

// A tracker's answer for one query in one frame, in the sequence's pixels.
struct PredSample {
  double x = 0;
  double y = 0;
  bool visible = false;
};
// Per query (same order as the QuerySpecs), per frame.
using Predictions = std::vector<std::vector<PredSample>>;

struct TapVidCounts {
  std::int64_t scored = 0;              // frames scored (known ground truth, chosen by the mode)
  std::int64_t occlusion_correct = 0;
  std::int64_t gt_visible = 0;
  std::array<std::int64_t, 5> within{};          // gt visible and within d
  std::array<std::int64_t, 5> true_positives{};  // ... and predicted visible
  std::array<std::int64_t, 5> false_positives{}; // predicted visible, gt occluded or farther than d

  TapVidCounts& operator+=(const TapVidCounts& other);
};

// Each score is NaN when its denominator is zero (the reference divides by zero too).
struct TapVidScores {
  double average_jaccard = 0;
  double average_within = 0;  // <delta_avg
  double occlusion_accuracy = 0;
  std::array<double, 5> jaccard{};
  std::array<double, 5> within{};
};

struct PckCounts {
  std::int64_t scored = 0;   // gt-visible frames with a mask area
  std::int64_t correct = 0;
};

// Whether frame `t` is scored for a query in frame `query_frame`.
bool is_scored_frame(QueryMode mode, int query_frame, int t);

TapVidCounts count_tapvid(const Sequence& sequence, std::span<const QuerySpec> queries,
                          const Predictions& predictions, QueryMode mode);
TapVidScores tapvid_scores(const TapVidCounts& counts);

// Scored frames as in count_tapvid, restricted to frames with a mask area > 0.
PckCounts count_pck(const Sequence& sequence, std::span<const QuerySpec> queries, const Predictions& predictions,
                    QueryMode mode, double alpha = kPckAlpha);
double pck_score(const PckCounts& counts);  // NaN when nothing was scored

// Means over sequences, each score over the sequences where it is defined (not NaN).
double mean_defined(std::span<const double> values);
TapVidScores mean_scores(std::span<const TapVidScores> scores);

}  // namespace edgetap::eval
