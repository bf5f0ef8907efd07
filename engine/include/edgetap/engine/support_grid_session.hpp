// A tracking session that tracks support points beside the caller's: a side x
// side grid of points at the cell centres of the session's first frame, started
// there and never handed out, as context for the network's cross-track layers
// (models/INFERENCE.md, "Support points"). The caller's tracks are the wrapped
// session's, unchanged; training/edgetap/evalsets.py (run_tracker, support) is
// the reference.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::engine {

// side x side points spread evenly over a width x height frame: cell centres,
// pixel centres at integer coordinates (evalsets.support_grid), row by row.
std::vector<Point2> support_grid_points(int side, int width, int height);
// The first `count` cell centres of the smallest square grid that has room for
// them (side ceil(sqrt(count))), row by row: a benchmark's or a warm-up's points.
std::vector<Point2> grid_points(int count, int width, int height);

class SupportGridSession final : public TrackingSession {
 public:
  // `side` >= 1 (a side of 0 needs no wrapper).
  SupportGridSession(std::unique_ptr<TrackingSession> network, int side);

  Status push_frame(const ImageView& frame) noexcept override;
  std::vector<int> add_tracks(std::span<const Point2> points) override { return network_->add_tracks(points); }
  void remove_track(int handle) override { network_->remove_track(handle); }
  bool alive(int handle) const override { return network_->alive(handle); }
  const TrackEstimate& estimate(int handle) const override { return network_->estimate(handle); }
  std::int64_t frames() const noexcept override { return network_->frames(); }
  // The support grid is the first frame's first batch.
  void warm_up(int width, int height, std::span<const int> batches) override;
  void encode_ahead(std::span<const ImageView> frames) override;

  // The support tracks' handles in the wrapped session (empty before the first frame).
  const std::vector<int>& support_handles() const noexcept { return support_; }

 private:
  std::unique_ptr<TrackingSession> network_;
  int side_;
  std::vector<int> support_;
};

}  // namespace edgetap::engine
