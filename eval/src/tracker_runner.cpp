#include "edgetap/eval/tracker_runner.hpp"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace edgetap::eval {
namespace {

ImageView view_of(const cv::Mat& rgb) {
  return {rgb.data, rgb.cols, rgb.rows, rgb.step[0]};
}

// The state of one query during a pass.
struct Live {
  bool added = false;
  bool alive = false;
  double x = 0;  // last answer, sequence pixels
  double y = 0;
  bool visible = false;
};

}  // namespace

PixelMap PixelMap::between(int seq_width, int seq_height, int frame_width, int frame_height) {
  return {static_cast<double>(frame_width) / seq_width, static_cast<double>(frame_height) / seq_height};
}

void track_pass(Tracker& tracker, std::span<const cv::Mat> frames, const PixelMap& map,
                std::span<const QuerySpec> queries, TimeDirection direction, Predictions& out,
                const FrameProgress& progress, int progress_offset, int progress_total, int every) {
  if (every < 1) throw std::invalid_argument("track_pass: every must be at least 1");
  const int n = static_cast<int>(frames.size());
  std::unordered_map<std::string, std::size_t> index_of;
  std::vector<std::vector<std::size_t>> starting_at(frames.size());  // queries by query frame
  for (std::size_t q = 0; q < queries.size(); ++q) {
    index_of.emplace("q" + std::to_string(q), q);
    starting_at.at(static_cast<std::size_t>(queries[q].frame)).push_back(q);
  }
  const auto frame_of = [&](int step) { return direction == TimeDirection::forward ? step : n - 1 - step; };
  // A frame left out by the cadence (and starting no query) is not pushed:
  // its answers are the last pushed frame's, which is what a subscriber holds.
  const auto pushes = [&](int step) {
    return step % every == 0 || !starting_at[static_cast<std::size_t>(frame_of(step))].empty();
  };
  std::vector<ImageView> pushed;  // the pass's frames in push order, announced to the tracker
  for (int step = 0; step < n; ++step) {
    if (pushes(step)) pushed.push_back(view_of(frames[static_cast<std::size_t>(frame_of(step))]));
  }
  tracker.encode_ahead(pushed);
  std::vector<Live> live(queries.size());
  std::vector<TrackPoint> answers;
  std::vector<Query> batch;
  for (int step = 0; step < n; ++step) {
    const int t = frame_of(step);
    const std::vector<std::size_t>& starting = starting_at[static_cast<std::size_t>(t)];
    if (pushes(step)) {
      const Status status = tracker.push_frame(view_of(frames[static_cast<std::size_t>(t)]), answers);
      if (!status) {
        throw TrackerError(std::string(tracker.name()) + " failed on frame " + std::to_string(t) + ": " +
                           status.message());
      }
      for (const TrackPoint& a : answers) {
        const auto it = index_of.find(a.id);
        if (it == index_of.end() || !live[it->second].alive) continue;
        Live& l = live[it->second];
        l.x = map.to_seq_x(a.x);
        l.y = map.to_seq_y(a.y);
        l.visible = a.visible && !a.lost;
        l.alive = !a.lost;
      }
    }
    for (std::size_t q = 0; q < queries.size(); ++q) {
      if (!live[q].added) continue;
      // A lost track keeps its last position, predicted occluded.
      out[q][static_cast<std::size_t>(t)] = {live[q].x, live[q].y, live[q].alive && live[q].visible};
    }
    batch.clear();
    for (std::size_t q : starting) {
      batch.push_back({"q" + std::to_string(q), static_cast<float>(map.to_frame_x(queries[q].x)),
                       static_cast<float>(map.to_frame_y(queries[q].y))});
      live[q] = {true, true, queries[q].x, queries[q].y, true};
    }
    if (!batch.empty()) tracker.add_queries(batch);
    if (progress) progress(progress_offset + step + 1, progress_total > 0 ? progress_total : n);
  }
}

Predictions predict(const TrackerFactory& make_tracker, std::span<const cv::Mat> frames, int seq_width,
                    int seq_height, std::span<const QuerySpec> queries, QueryMode mode, const FrameProgress& progress,
                    int every) {
  Predictions out(queries.size(), std::vector<PredSample>(frames.size()));
  for (std::size_t q = 0; q < queries.size(); ++q) {
    for (PredSample& s : out[q]) s = {queries[q].x, queries[q].y, false};
    out[q][static_cast<std::size_t>(queries[q].frame)].visible = true;
  }
  if (frames.empty()) return out;
  const PixelMap map = PixelMap::between(seq_width, seq_height, frames[0].cols, frames[0].rows);
  const int n = static_cast<int>(frames.size());
  const int total = mode == QueryMode::strided ? 2 * n : n;
  auto forward = make_tracker();
  track_pass(*forward, frames, map, queries, TimeDirection::forward, out, progress, 0, total, every);
  if (mode == QueryMode::strided) {
    auto backward = make_tracker();
    track_pass(*backward, frames, map, queries, TimeDirection::backward, out, progress, n, total, every);
  }
  return out;
}

}  // namespace edgetap::eval
