// The offline clip API: tracks queries over a whole clip by streaming it, so
// offline results are exactly the streaming ones (the evaluation workload and
// the seed's reference workload: 47 frames, 256x256, batch 1). The clip is
// announced to the session first (TrackingSession::encode_ahead): a GPU
// session encodes its frames in batches, which changes nothing but the
// convolutions' summation order (engine/STREAMING.md, section 1).
#pragma once

#include <vector>

#include "edgetap/engine/streaming_session.hpp"

namespace edgetap::engine {

struct ClipQuery {
  int frame = 0;  // the query frame
  float x = 0, y = 0;
};

struct ClipResult {
  // [query][frame]; entries before a query's frame are zero (unspecified).
  std::vector<std::vector<TrackEstimate>> tracks;
};

// `frames` must all have the same size (sides multiples of the model's size_multiple).
// Throws std::invalid_argument on a bad frame or a query frame outside the clip.
ClipResult track_clip(const Network& network, const std::vector<ImageView>& frames,
                      const std::vector<ClipQuery>& queries, int iters = 0);
// The same on a session the caller made (a GPU one), which has seen no frame;
// the clip is announced to it first (TrackingSession::encode_ahead).
ClipResult track_clip(TrackingSession& session, const std::vector<ImageView>& frames,
                      const std::vector<ClipQuery>& queries);

}  // namespace edgetap::engine
