// Evaluating a tracker on datasets with ground truth: reads each sequence,
// runs the tracker in the requested query modes, scores it, and optionally
// draws an overlay. Results are per sequence; a dataset's (and the overall)
// score is the mean over sequences, as in TAP-Vid.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/eval/dataset_dir.hpp"
#include "edgetap/eval/frame_source.hpp"
#include "edgetap/eval/progress_line.hpp"
#include "edgetap/eval/tapvid_metrics.hpp"
#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

struct EvalOptions {
  std::string tracker = "klt";
  FrameSize size{256, 256};              // what the tracker sees (TAP-Vid's and the daemon's default model size)
  std::vector<QueryMode> modes{QueryMode::first};
  int stride = 5;                        // strided mode's query stride
  int every = 1;                         // the tracker sees every n-th frame (a ladder rung's stride)
  std::filesystem::path overlay_dir;     // empty: no overlays
};

struct ModeResult {
  QueryMode mode = QueryMode::first;
  int queries = 0;
  TapVidScores scores;
  double pck = 0;  // NaN without mask areas
};

struct SequenceResult {
  std::string name;
  int width = 0;
  int height = 0;
  int frames = 0;
  int points = 0;
  std::vector<ModeResult> modes;  // in EvalOptions::modes order
  double track_seconds = 0;       // time spent in the tracker passes
};

struct DatasetResult {
  std::string name;
  std::string path;
  std::vector<SequenceResult> sequences;
};

// Mean over sequences for one mode (only sequences scored in that mode).
struct ModeSummary {
  QueryMode mode = QueryMode::first;
  int sequences = 0;
  TapVidScores scores;
  double pck = 0;
};
std::vector<ModeSummary> summarize(const std::vector<const SequenceResult*>& sequences,
                                   const std::vector<QueryMode>& modes);
std::vector<const SequenceResult*> all_sequences(const std::vector<DatasetResult>& datasets);

// Throws DatasetError on bad input, TrackerError when the tracker fails.
SequenceResult evaluate_sequence(const Sequence& sequence, const std::vector<cv::Mat>& frames,
                                 const TrackerFactory& make_tracker, const EvalOptions& options,
                                 const std::string& dataset_name, ProgressLine& progress);
DatasetResult evaluate_dataset(const DatasetDir& dataset, const TrackerFactory& make_tracker,
                               const EvalOptions& options, ProgressLine& progress);

}  // namespace edgetap::eval
