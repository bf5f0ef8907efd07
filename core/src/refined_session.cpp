#include "edgetap/engine/refined_session.hpp"

namespace edgetap::engine {

RefinedSession::RefinedSession(std::unique_ptr<TrackingSession> network, const TemplateAlignmentConfig& config,
                               const ModelConfig& model)
    : network_(std::move(network)), config_(config), model_(model) {}

Status RefinedSession::push_frame(const ImageView& frame) noexcept {
  Status status = network_->push_frame(frame);
  if (!status) return status;
  try {
    frame_ = grey_frame(frame);
    last_accepted_ = 0;
    const std::int64_t now = network_->frames();
    for (std::size_t h = 0; h < tracks_.size(); ++h) {
      const int handle = static_cast<int>(h);
      if (!network_->alive(handle)) continue;
      Track& t = tracks_[h];
      const TrackEstimate& e = network_->estimate(handle);
      t.published = e;
      t.published_frame = now;
      if (t.tmpl.empty() || model_.visible_score(e.visible, e.confidence) < model_.visible_threshold) continue;
      const AlignmentResult a = align_template(frame_, t.tmpl, e.x, e.y, t.warp, config_);
      if (!a.accepted) continue;
      t.published.x = a.x;
      t.published.y = a.y;
      ++last_accepted_;
      const float det = a.warp.det();
      if (det > 0.3f && det < 3.f) t.warp = a.warp;  // a warp that has not collapsed or blown up
    }
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("template refinement: ") + e.what());
  }
}

std::vector<int> RefinedSession::add_tracks(std::span<const Point2> points) {
  const std::vector<int> handles = network_->add_tracks(points);
  for (std::size_t i = 0; i < handles.size(); ++i) {
    const auto h = static_cast<std::size_t>(handles[i]);
    if (h >= tracks_.size()) tracks_.resize(h + 1);
    tracks_[h] = Track{};
    tracks_[h].tmpl = capture_template(frame_, points[i].x, points[i].y, config_);
  }
  return handles;
}

const TrackEstimate& RefinedSession::estimate(int handle) const {
  const auto h = static_cast<std::size_t>(handle);
  if (h < tracks_.size() && tracks_[h].published_frame == network_->frames()) return tracks_[h].published;
  return network_->estimate(handle);
}

}  // namespace edgetap::engine
