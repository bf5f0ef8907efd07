#include "answer_pass.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "png_reader.hpp"

namespace edgetap::replay {
namespace {

void push(const trace::Trace& trace, trace::Call call, Tracker& tracker, const std::filesystem::path& frames_root,
          std::ostream& out, PassStats& stats) {
  RgbImage image;
  try {
    image = read_png_rgb(frames_root / call.file);
  } catch (const std::exception& e) {
    throw trace::TraceError(trace::where(trace, call) + e.what());
  }
  if (image.width != call.width || image.height != call.height) {
    throw trace::TraceError(trace::where(trace, call) + call.file + " is " + std::to_string(image.width) + "x" +
                            std::to_string(image.height) + ", the trace says " + std::to_string(call.width) + "x" +
                            std::to_string(call.height));
  }
  std::vector<TrackPoint> points;
  const auto started = std::chrono::steady_clock::now();
  const Status status = tracker.push_frame(image.view(), points);
  stats.track_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!status) {
    throw trace::TraceError(trace::where(trace, call) + "frame " + std::to_string(call.frame) + ": " +
                            std::string(tracker.name()) + " failed: " + status.message());
  }
  ++stats.frames;
  call.points = std::move(points);
  out << trace::format_call(call) << '\n';
}

}  // namespace

PassStats answer_pass(const trace::Trace& trace, std::size_t pass, Tracker& tracker,
                      const std::filesystem::path& frames_root, std::ostream& out) {
  PassStats stats;
  for (const trace::Call& call : trace.passes.at(pass)) {
    try {
      switch (call.op) {
        case trace::Op::add_queries:
          tracker.add_queries(call.queries);
          out << trace::format_call(call) << '\n';
          break;
        case trace::Op::remove_queries:
          tracker.remove_queries(call.ids);
          out << trace::format_call(call) << '\n';
          break;
        case trace::Op::push_frame:
          push(trace, call, tracker, frames_root, out, stats);
          break;
      }
    } catch (const trace::TraceError&) {
      throw;
    } catch (const std::exception& e) {  // the tracker refused a call
      throw trace::TraceError(trace::where(trace, call) + trace::to_string(call.op) + ": " + e.what());
    }
  }
  return stats;
}

}  // namespace edgetap::replay
