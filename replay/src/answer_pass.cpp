#include "answer_pass.hpp"

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "png_reader.hpp"

namespace edgetap::replay {
namespace {

// Frames decoded ahead of their pushes and announced to the tracker
// (Tracker::encode_ahead: the GPU engine encodes them in batches), so many at
// a time: a long pass's frames are not all held at once.
constexpr std::size_t kFramesAhead = 64;

RgbImage decode(const trace::Trace& trace, const trace::Call& call, const std::filesystem::path& frames_root) {
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
  return image;
}

// The pass's frames from call `from` on, up to kFramesAhead of them, decoded
// and announced to the tracker (its time counted as tracking time).
std::deque<RgbImage> decode_ahead(const trace::Trace& trace, const std::vector<trace::Call>& calls, std::size_t from,
                                  Tracker& tracker, const std::filesystem::path& frames_root, PassStats& stats) {
  std::deque<RgbImage> ahead;
  for (std::size_t i = from; i < calls.size() && ahead.size() < kFramesAhead; ++i) {
    if (calls[i].op == trace::Op::push_frame) ahead.push_back(decode(trace, calls[i], frames_root));
  }
  std::vector<ImageView> views;
  for (const RgbImage& image : ahead) views.push_back(image.view());
  const auto started = std::chrono::steady_clock::now();
  tracker.encode_ahead(views);
  stats.track_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return ahead;
}

void push(const trace::Trace& trace, trace::Call call, const RgbImage& image, Tracker& tracker, std::ostream& out,
          PassStats& stats) {
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
  const std::vector<trace::Call>& calls = trace.passes.at(pass);
  std::deque<RgbImage> ahead;  // the next pushes' frames, decoded
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const trace::Call& call = calls[i];
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
          if (ahead.empty()) ahead = decode_ahead(trace, calls, i, tracker, frames_root, stats);
          push(trace, call, ahead.front(), tracker, out, stats);
          ahead.pop_front();
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
