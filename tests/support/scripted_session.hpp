// A network session whose outputs a test sets, for testing what wraps a
// session (RefinedSession): its estimate for a track is whatever `next` holds
// when a frame is pushed. Header-only: needs only core's session interface.
#pragma once

#include <vector>

#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::test {

class ScriptedSession final : public engine::TrackingSession {
 public:
  std::vector<engine::TrackEstimate> next;  // by handle, taken at each push
  Status push_frame(const ImageView&) noexcept override {
    ++frames_;
    for (std::size_t h = 0; h < estimates_.size() && h < next.size(); ++h) estimates_[h] = next[h];
    return Status::ok();
  }
  std::vector<int> add_tracks(std::span<const engine::Point2> points) override {
    std::vector<int> handles;
    for (const engine::Point2& p : points) {
      handles.push_back(static_cast<int>(estimates_.size()));
      estimates_.push_back({p.x, p.y, 1.f, 1.f});
      alive_.push_back(true);
    }
    return handles;
  }
  void remove_track(int handle) override { alive_[static_cast<std::size_t>(handle)] = false; }
  bool alive(int handle) const override { return alive_[static_cast<std::size_t>(handle)]; }
  const engine::TrackEstimate& estimate(int handle) const override { return estimates_[static_cast<std::size_t>(handle)]; }
  std::int64_t frames() const noexcept override { return frames_; }

 private:
  std::int64_t frames_ = 0;
  std::vector<engine::TrackEstimate> estimates_;
  std::vector<bool> alive_;
};

}  // namespace edgetap::test
