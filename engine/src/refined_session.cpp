#include "edgetap/engine/refined_session.hpp"

#include <exception>
#include <numeric>
#include <string>

namespace edgetap::engine {

RefinedSession::RefinedSession(std::unique_ptr<TrackingSession> network, std::unique_ptr<TemplateAligner> aligner,
                               const ModelConfig& model)
    : network_(std::move(network)), aligner_(std::move(aligner)), model_(model) {}

RefinedSession::RefinedSession(std::unique_ptr<TrackingSession> network, const TemplateAlignmentConfig& config,
                               const ModelConfig& model, int threads)
    : RefinedSession(std::move(network), std::make_unique<CpuTemplateAligner>(config, threads), model) {}

Status RefinedSession::push_frame(const ImageView& frame) noexcept {
  Status status = network_->push_frame(frame);
  if (!status) return status;
  try {
    aligner_->set_frame(frame);
    last_accepted_ = 0;
    const std::int64_t now = network_->frames();
    jobs_.clear();
    for (std::size_t h = 0; h < tracks_.size(); ++h) {
      const int handle = static_cast<int>(h);
      if (!network_->alive(handle)) continue;
      Track& t = tracks_[h];
      const TrackEstimate& e = network_->estimate(handle);
      t.published = e;
      t.published_frame = now;
      if (!t.has_template || model_.visible_score(e.visible, e.confidence) < model_.visible_threshold) continue;
      jobs_.push_back(AlignmentJob{handle, e.x, e.y, t.warp});
    }
    aligner_->align(jobs_, alignments_);
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const AlignmentResult& a = alignments_[i];
      if (!a.accepted) continue;
      Track& t = tracks_[static_cast<std::size_t>(jobs_[i].handle)];
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

void RefinedSession::warm_up(int width, int height, std::span<const int> batches) {
  network_->warm_up(width, height, batches);
  aligner_->warm_up(width, height, std::accumulate(batches.begin(), batches.end(), 0));
}

void RefinedSession::encode_ahead(std::span<const ImageView> frames) {
  network_->encode_ahead(frames);
}

std::vector<int> RefinedSession::add_tracks(std::span<const Point2> points) {
  const std::vector<int> handles = network_->add_tracks(points);
  const std::vector<bool> has_template = aligner_->capture(handles, points);
  for (std::size_t i = 0; i < handles.size(); ++i) {
    const auto h = static_cast<std::size_t>(handles[i]);
    if (h >= tracks_.size()) tracks_.resize(h + 1);
    tracks_[h] = Track{};
    tracks_[h].has_template = has_template[i];
  }
  return handles;
}

const TrackEstimate& RefinedSession::estimate(int handle) const {
  const auto h = static_cast<std::size_t>(handle);
  if (h < tracks_.size() && tracks_[h].published_frame == network_->frames()) return tracks_[h].published;
  return network_->estimate(handle);
}

}  // namespace edgetap::engine
