// Recording a run's tracker calls as a trace (edgetap/tracker_trace.hpp) while
// the run goes on as usual: every tracker the wrapped factory makes is a pass,
// numbered in creation order, whose calls go to DIR/trace.jsonl and whose
// frames to DIR/frames/ as lossless PNGs. `edgetap eval --record-trace DIR`.
#pragma once

#include <filesystem>
#include <memory>

#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

class TraceSink;

class TraceRecorder {
 public:
  // Creates `dir` (absent or empty; a folder with files in it is refused so
  // that no stale frame mixes in). Throws std::runtime_error naming it.
  explicit TraceRecorder(const std::filesystem::path& dir);
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Trackers from `make_tracker`, each recorded as the next pass. A failure
  // to record is the tracker's failure (push_frame's status, or an exception).
  TrackerFactory wrap(TrackerFactory make_tracker);

  int passes() const noexcept;
  long long frames() const noexcept;

 private:
  std::shared_ptr<TraceSink> sink_;
};

}  // namespace edgetap::eval
