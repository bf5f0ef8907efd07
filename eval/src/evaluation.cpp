#include "edgetap/eval/evaluation.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "edgetap/eval/gt_json.hpp"
#include "edgetap/eval/overlay.hpp"

namespace edgetap::eval {
namespace {

std::string fixed(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

}  // namespace

std::vector<ModeSummary> summarize(const std::vector<const SequenceResult*>& sequences,
                                   const std::vector<QueryMode>& modes) {
  std::vector<ModeSummary> out;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    std::vector<TapVidScores> scores;
    std::vector<double> pck;
    for (const SequenceResult* s : sequences) {
      if (m >= s->modes.size() || s->modes[m].queries == 0) continue;
      scores.push_back(s->modes[m].scores);
      pck.push_back(s->modes[m].pck);
    }
    out.push_back({modes[m], static_cast<int>(scores.size()), mean_scores(scores), mean_defined(pck)});
  }
  return out;
}

std::vector<const SequenceResult*> all_sequences(const std::vector<DatasetResult>& datasets) {
  std::vector<const SequenceResult*> out;
  for (const DatasetResult& d : datasets) {
    for (const SequenceResult& s : d.sequences) out.push_back(&s);
  }
  return out;
}

SequenceResult evaluate_sequence(const Sequence& sequence, const std::vector<cv::Mat>& frames,
                                 const TrackerFactory& make_tracker, const EvalOptions& options,
                                 const std::string& dataset_name, ProgressLine& progress) {
  SequenceResult result{sequence.name, sequence.width, sequence.height, sequence.num_frames,
                        static_cast<int>(sequence.points.size()), {}, 0};
  for (QueryMode mode : options.modes) {
    const std::vector<QuerySpec> queries =
        mode == QueryMode::first ? queries_first(sequence) : queries_strided(sequence, options.stride);
    const std::string label = dataset_name + "/" + sequence.name + " " + to_string(mode);
    const auto started = std::chrono::steady_clock::now();
    const Predictions predictions = predict(make_tracker, frames, sequence.width, sequence.height, queries, mode,
                                            [&](int done, int total) {
                                              progress.update(label + ": frame " + std::to_string(done) + "/" +
                                                              std::to_string(total));
                                            },
                                            options.every);
    result.track_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ModeResult m{mode, static_cast<int>(queries.size()),
                 tapvid_scores(count_tapvid(sequence, queries, predictions, mode)),
                 pck_score(count_pck(sequence, queries, predictions, mode))};
    result.modes.push_back(m);
    if (!options.overlay_dir.empty() && !queries.empty()) {
      // A sequence given on its own is its own dataset: do not repeat the name.
      const std::string stem = dataset_name == sequence.name ? sequence.name : dataset_name + "_" + sequence.name;
      const auto file = options.overlay_dir / (stem + "_" + to_string(mode) + ".png");
      write_overlay(sequence, frames, queries, predictions, mode, file);
    }
    progress.finish(label + ": " + std::to_string(queries.size()) + " queries, AJ " +
                    fixed(m.scores.average_jaccard) + ", <d_avg " + fixed(m.scores.average_within) + ", OA " +
                    fixed(m.scores.occlusion_accuracy) + (std::isnan(m.pck) ? "" : ", PCK " + fixed(m.pck)));
  }
  return result;
}

DatasetResult evaluate_dataset(const DatasetDir& dataset, const TrackerFactory& make_tracker,
                               const EvalOptions& options, ProgressLine& progress) {
  DatasetResult result{dataset.name, dataset.path.string(), {}};
  for (const auto& dir : dataset.sequences) {
    progress.update(dataset.name + "/" + dir.filename().string() + ": reading");
    const Sequence sequence = read_ground_truth(dir);
    const std::vector<cv::Mat> frames = load_sequence_frames(sequence, options.size);
    result.sequences.push_back(evaluate_sequence(sequence, frames, make_tracker, options, dataset.name, progress));
  }
  return result;
}

}  // namespace edgetap::eval
