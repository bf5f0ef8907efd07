// Runs a tracker over a sequence through the Tracker seam, the way the daemon
// feeds it: frames pushed in order, each query added right after its query
// frame was pushed (the seam's time model), answers read from the next push on.
// Tracking backward in time is the same run over the frames in reverse order.
// A track the tracker gives up (TrackPoint::lost) is scored from then on as
// predicted occluded at its last position.
#pragma once

#include <opencv2/core.hpp>

#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "edgetap/eval/query_sampling.hpp"
#include "edgetap/eval/tapvid_metrics.hpp"
#include "edgetap/pixel_scale.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::eval {

// A tracker failed on a frame (push_frame returned an error).
class TrackerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using TrackerFactory = std::function<std::unique_ptr<Tracker>()>;
// Called after every pushed frame with (frames pushed so far, frames in all passes).
using FrameProgress = std::function<void(int done, int total)>;

enum class TimeDirection { forward, backward };

// Maps between the sequence's pixels and the pixels of the frames the tracker
// sees (pixel centres at integer coordinates in both).
struct PixelMap {
  double sx = 1;  // tracker pixels per sequence pixel
  double sy = 1;
  static PixelMap between(int seq_width, int seq_height, int frame_width, int frame_height);
  double to_frame_x(double x) const { return rescale_pixel(x, sx); }
  double to_frame_y(double y) const { return rescale_pixel(y, sy); }
  double to_seq_x(double x) const { return (x + 0.5) / sx - 0.5; }
  double to_seq_y(double y) const { return (y + 0.5) / sy - 0.5; }
};

// One pass of `tracker` (fresh, no tracks) over `frames` in `direction`.
// Writes the frames after (forward) or before (backward) each query's frame
// into `out` (one row per query, num_frames samples each); leaves the others.
// `every` is the cadence of a ladder rung's stride: the tracker sees every
// n-th frame of the pass (counted from the pass's first) and each query's own
// frame; a frame it does not see holds the answers of the last one it saw.
void track_pass(Tracker& tracker, std::span<const cv::Mat> frames, const PixelMap& map,
                std::span<const QuerySpec> queries, TimeDirection direction, Predictions& out,
                const FrameProgress& progress = {}, int progress_offset = 0, int progress_total = 0,
                int every = 1);

// Predictions for every query over every frame: the query frame holds the
// query itself (visible); frames outside the mode's scope hold the query
// position, not visible. Query-first runs one forward pass; strided adds a
// backward pass. `every`: as for track_pass.
Predictions predict(const TrackerFactory& make_tracker, std::span<const cv::Mat> frames, int seq_width,
                    int seq_height, std::span<const QuerySpec> queries, QueryMode mode,
                    const FrameProgress& progress = {}, int every = 1);

}  // namespace edgetap::eval
