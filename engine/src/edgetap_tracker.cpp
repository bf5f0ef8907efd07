#include "edgetap/engine/edgetap_tracker.hpp"

#include <algorithm>
#include <exception>

namespace edgetap::engine {

EdgeTapTracker::EdgeTapTracker(std::shared_ptr<const Network> network, std::optional<float> visible_threshold,
                               int iters)
    : network_(std::move(network)),
      session_(std::make_unique<StreamingSession>(*network_, iters)),
      visible_threshold_(visible_threshold.value_or(network_->config.visible_threshold)) {}

EdgeTapTracker::EdgeTapTracker(std::shared_ptr<const Network> network, std::unique_ptr<TrackingSession> session,
                               std::optional<float> visible_threshold)
    : network_(std::move(network)),
      session_(std::move(session)),
      visible_threshold_(visible_threshold.value_or(network_->config.visible_threshold)) {}

void EdgeTapTracker::add_queries(std::span<const Query> queries) {
  std::vector<std::string> replaced;
  for (const Query& q : queries) {
    if (handles_.count(q.id)) replaced.push_back(q.id);
  }
  remove_queries(replaced);
  if (session_->frames() == 0) {
    pending_.insert(pending_.end(), queries.begin(), queries.end());
    return;
  }
  std::vector<Point2> points;
  for (const Query& q : queries) points.push_back({q.x, q.y});
  const std::vector<int> handles = session_->add_tracks(points);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    handles_[queries[i].id] = handles[i];
    order_.push_back(queries[i].id);
  }
}

std::size_t EdgeTapTracker::remove_queries(std::span<const std::string> ids) {
  std::size_t removed = 0;
  for (const std::string& id : ids) {
    const auto it = handles_.find(id);
    if (it != handles_.end()) {
      session_->remove_track(it->second);
      handles_.erase(it);
      order_.erase(std::find(order_.begin(), order_.end(), id));
      ++removed;
      continue;
    }
    const auto p = std::find_if(pending_.begin(), pending_.end(), [&](const Query& q) { return q.id == id; });
    if (p != pending_.end()) {
      pending_.erase(p);
      ++removed;
    }
  }
  return removed;
}

Status EdgeTapTracker::warm_up(int width, int height, std::size_t points) noexcept {
  if (session_->frames() > 0) return Status::ok();  // only a tracker that has seen nothing yet
  try {
    const int batch = static_cast<int>(points);  // the seeder's points come in one add_tracks
    session_->warm_up(width, height, std::span<const int>(&batch, points > 0 ? 1 : 0));
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("warm-up: ") + e.what());
  }
}

Status EdgeTapTracker::push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept {
  out.clear();
  Status status = session_->push_frame(frame);
  if (!status) return status;
  try {
    if (!pending_.empty()) {
      // Queries given before the first frame are located in it.
      std::vector<Query> pending;
      pending.swap(pending_);
      add_queries(pending);
    }
    out.reserve(order_.size());
    for (const std::string& id : order_) {
      const TrackEstimate& e = session_->estimate(handles_.at(id));
      const bool visible = network_->config.visible_score(e.visible, e.confidence) >= visible_threshold_;
      out.push_back({id, e.x, e.y, visible, e.confidence, false});
    }
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("edgetap tracker: ") + e.what());
  }
}

}  // namespace edgetap::engine
