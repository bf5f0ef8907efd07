// Answering one pass of a trace: its calls made in order on a fresh tracker,
// each push_frame's frame decoded from the trace's folder and its answer kept.
// Frames are decoded some pushes ahead and announced to the tracker
// (Tracker::encode_ahead), so a GPU engine encodes them in batches.
#pragma once

#include <filesystem>
#include <ostream>

#include "edgetap/tracker.hpp"
#include "edgetap/tracker_trace.hpp"

namespace edgetap::replay {

struct PassStats {
  int frames = 0;
  double track_seconds = 0;  // in the tracker's push_frame and encode_ahead only (not decoding)
};

// Makes the calls of `trace.passes[pass]` on `tracker` (fresh), writing each
// call's line to `out`, push_frame lines with the answer ("points"). Frames are
// read relative to `frames_root`. Throws trace::TraceError naming the file,
// line and pass when a frame is missing or of the wrong size, or the tracker
// fails.
PassStats answer_pass(const trace::Trace& trace, std::size_t pass, Tracker& tracker,
                      const std::filesystem::path& frames_root, std::ostream& out);

}  // namespace edgetap::replay
