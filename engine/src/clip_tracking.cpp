#include "edgetap/engine/clip_tracking.hpp"

#include <stdexcept>
#include <string>

namespace edgetap::engine {

ClipResult track_clip(const Network& network, const std::vector<ImageView>& frames,
                      const std::vector<ClipQuery>& queries, int iters) {
  StreamingSession session(network, iters);
  return track_clip(session, frames, queries);
}

ClipResult track_clip(TrackingSession& session, const std::vector<ImageView>& frames,
                      const std::vector<ClipQuery>& queries) {
  const int T = static_cast<int>(frames.size());
  for (const ClipQuery& q : queries) {
    if (q.frame < 0 || q.frame >= T) {
      throw std::invalid_argument("query frame " + std::to_string(q.frame) + " outside the clip's " +
                                  std::to_string(T) + " frames");
    }
  }
  session.encode_ahead(frames);
  ClipResult result;
  result.tracks.assign(queries.size(), std::vector<TrackEstimate>(static_cast<std::size_t>(T)));
  std::vector<int> handles(queries.size(), -1);
  for (int t = 0; t < T; ++t) {
    const Status status = session.push_frame(frames[static_cast<std::size_t>(t)]);
    if (!status) throw std::invalid_argument("frame " + std::to_string(t) + ": " + status.message());
    std::vector<Point2> starting;
    std::vector<std::size_t> which;
    for (std::size_t n = 0; n < queries.size(); ++n) {
      if (queries[n].frame != t) continue;
      starting.push_back({queries[n].x, queries[n].y});
      which.push_back(n);
    }
    if (!starting.empty()) {
      const std::vector<int> started = session.add_tracks(starting);
      for (std::size_t i = 0; i < which.size(); ++i) handles[which[i]] = started[i];
    }
    for (std::size_t n = 0; n < queries.size(); ++n) {
      if (handles[n] >= 0) result.tracks[n][static_cast<std::size_t>(t)] = session.estimate(handles[n]);
    }
  }
  return result;
}

}  // namespace edgetap::engine
