// Scoring answers computed elsewhere: trackers that answer from an answered
// trace (edgetap-trace-run's output, edgetap/tracker_trace.hpp) instead of
// tracking. The n-th tracker the factory makes replays pass n, checking that
// the calls it receives are the recorded ones (same op, same ids and query
// positions, same frame size): the run must be the one recorded.
// `edgetap eval --replay-trace FILE`.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "edgetap/eval/tracker_runner.hpp"

namespace edgetap::eval {

class ReplayState;

class TraceReplay {
 public:
  // Reads `answered_trace`; throws trace::TraceError naming the file and line.
  // The trackers call themselves `tracker_name`.
  TraceReplay(const std::filesystem::path& answered_trace, std::string tracker_name);

  // A call that differs from the trace throws trace::TraceError from
  // add_queries / remove_queries, and is an error status from push_frame;
  // the message names the file, line, pass, call and id.
  TrackerFactory factory() const;

  // Throws trace::TraceError when the run left recorded passes or calls unmade.
  void check_complete() const;

 private:
  std::shared_ptr<ReplayState> state_;
};

}  // namespace edgetap::eval
