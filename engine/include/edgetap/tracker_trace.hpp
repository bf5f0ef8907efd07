// A tracker trace: the exact calls the trackers of a run received, so that the
// run can be replayed on another engine or host. `edgetap eval --record-trace
// DIR` writes one, `edgetap-trace-run` answers it on the CPU or CUDA engine,
// `edgetap eval --replay-trace FILE` scores the answers (eval/README.md).
//
// Format: JSON Lines, one call per line in the order made. Every line has
// "pass" (the tracker instance, numbered from 0 in the order the run made them)
// and "op":
//   {"pass":0,"op":"add_queries","queries":[{"id":"q0","x":12.5,"y":40.25}]}
//   {"pass":0,"op":"remove_queries","ids":["q0"]}
//   {"pass":0,"op":"push_frame","frame":0,"file":"frames/p00000-f000000.png","width":256,"height":256}
// "frame" counts the pass's pushes from 0; "file" is the pushed frame as a
// lossless 8-bit RGB PNG of the size the tracker saw, relative to the folder of
// the trace (DIR/trace.jsonl and DIR/frames/). An answered trace (the runner's
// output) holds the same lines, each push_frame with the tracker's answer:
//   "points":[{"id":"q0","x":13.1,"y":40.2,"visible":true,"confidence":0.93,"lost":false}]
// Numbers are written so that they read back to the same float (a float's
// double, shortest round trip); a non-finite one is written null, read back NaN.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "edgetap/tracker.hpp"

namespace edgetap::trace {

// A trace that cannot be read, or calls that do not match it. The message
// names the file and line (and the pass and id where there is one).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Op { add_queries, remove_queries, push_frame };
const char* to_string(Op op) noexcept;

struct Call {
  int pass = 0;
  Op op = Op::push_frame;
  std::vector<Query> queries;    // add_queries
  std::vector<std::string> ids;  // remove_queries
  int frame = 0;                 // push_frame: pushes in this pass before it
  std::string file;              // push_frame: the PNG, relative to the trace's folder
  int width = 0;                 // push_frame: frame size
  int height = 0;
  std::optional<std::vector<TrackPoint>> points;  // push_frame in an answered trace
  int line = 0;                  // 1-based line it was read from (0: not read from a file)
};

// One line of the format, without the newline.
std::string format_call(const Call& call);
// Parses one line; throws TraceError saying what is wrong (without a location).
Call parse_call(std::string_view text);

struct Trace {
  std::filesystem::path file;
  std::vector<std::vector<Call>> passes;  // calls by pass; a pass may have none
};

// Reads a trace (or an answered one: every push_frame with "points" when
// `answered`). Checks each pass's frame numbers run 0, 1, 2, ...
// Throws TraceError naming the file, line and pass.
Trace read_trace(const std::filesystem::path& file, bool answered = false);

// "FILE:LINE: pass P: " for messages about `call` of `trace`.
std::string where(const Trace& trace, const Call& call);

// The conventional names inside a trace folder.
inline constexpr const char* kTraceFile = "trace.jsonl";
inline constexpr const char* kFramesDir = "frames";

}  // namespace edgetap::trace
