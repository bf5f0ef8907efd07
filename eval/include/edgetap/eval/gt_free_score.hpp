// Scores for real clips without ground truth:
//  - forward-backward cycle: a grid of queries tracked from the first frame to
//    the last, then the survivors tracked back from where they ended; a good
//    tracker returns them where they started;
//  - jitter on static background: among tracks that never move farther than a
//    small radius from their start (background of a fixed camera), the RMS
//    frame-to-frame step, which for a static point is pure noise.
// Distances are pixels after scaling the frame to 256x256, like the TAP-Vid metrics.
#pragma once

#include <opencv2/core.hpp>

#include <span>
#include <string>
#include <vector>

#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

struct GtFreeOptions {
  int grid = 16;                  // grid x grid queries in the first frame
  int max_frames = 100;
  double static_radius_px = 2.0;  // a track whose every position is this close to its start is static
  double cycle_good_px = 2.0;     // a cycle error below this counts as consistent
};

struct GtFreeResult {
  std::string name;
  int frames = 0;
  int seeded = 0;
  int kept_forward = 0;      // still tracked (visible) in the last frame
  int kept_cycle = 0;        // ... and back in the first frame
  double cycle_median_px = 0;  // over kept_cycle; NaN when none
  double cycle_mean_px = 0;
  double cycle_consistent = 0;  // fraction of the seeded tracks back within cycle_good_px
  int static_tracks = 0;
  double jitter_rms_px = 0;     // NaN without static tracks
};

GtFreeResult score_without_ground_truth(const std::string& name, std::span<const cv::Mat> frames,
                                        const TrackerFactory& make_tracker, const GtFreeOptions& options,
                                        const FrameProgress& progress = {});

std::string format_gt_free_table(const std::vector<GtFreeResult>& results);
std::string format_gt_free_json(const std::vector<GtFreeResult>& results, const std::string& tracker,
                                const std::string& frame_size, const GtFreeOptions& options);

}  // namespace edgetap::eval
