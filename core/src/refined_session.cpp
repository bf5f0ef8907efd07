#include "edgetap/engine/refined_session.hpp"

#include <algorithm>
#include <exception>
#include <thread>

namespace edgetap::engine {

namespace {

int thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();
  return std::clamp(static_cast<int>(hardware), 1, RefinedSession::kMaxThreads);
}

}  // namespace

RefinedSession::RefinedSession(std::unique_ptr<TrackingSession> network, const TemplateAlignmentConfig& config,
                               const ModelConfig& model, int threads)
    : network_(std::move(network)), config_(config), model_(model), threads_(thread_count(threads)) {}

Status RefinedSession::push_frame(const ImageView& frame) noexcept {
  Status status = network_->push_frame(frame);
  if (!status) return status;
  try {
    frame_ = grey_frame(frame);
    last_accepted_ = 0;
    const std::int64_t now = network_->frames();
    aligning_.clear();
    for (std::size_t h = 0; h < tracks_.size(); ++h) {
      const int handle = static_cast<int>(h);
      if (!network_->alive(handle)) continue;
      Track& t = tracks_[h];
      const TrackEstimate& e = network_->estimate(handle);
      t.published = e;
      t.published_frame = now;
      if (t.tmpl.empty() || model_.visible_score(e.visible, e.confidence) < model_.visible_threshold) continue;
      aligning_.push_back(handle);
    }
    align_all();
    for (std::size_t i = 0; i < aligning_.size(); ++i) {
      const AlignmentResult& a = alignments_[i];
      if (!a.accepted) continue;
      Track& t = tracks_[static_cast<std::size_t>(aligning_[i])];
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

void RefinedSession::align_all() {
  const std::size_t n = aligning_.size();
  alignments_.assign(n, AlignmentResult{});
  const auto align_range = [this](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Track& t = tracks_[static_cast<std::size_t>(aligning_[i])];
      alignments_[i] = align_template(frame_, t.tmpl, t.published.x, t.published.y, t.warp, config_);
    }
  };
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads_), n / kTracksPerThread);
  if (workers <= 1) {
    align_range(0, n);
    return;
  }
  // Contiguous shares; the calling thread takes the first. A failure in a helper (an allocation)
  // is carried back and rethrown here.
  std::vector<std::thread> helpers;
  std::vector<std::exception_ptr> failures(workers);
  for (std::size_t w = 1; w < workers; ++w) {
    helpers.emplace_back([&, w] {
      try {
        align_range(n * w / workers, n * (w + 1) / workers);
      } catch (...) {
        failures[w] = std::current_exception();
      }
    });
  }
  try {
    align_range(0, n / workers);
  } catch (...) {
    failures[0] = std::current_exception();
  }
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
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
