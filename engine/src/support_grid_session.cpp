#include "edgetap/engine/support_grid_session.hpp"

#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>

#include "edgetap/pixel_scale.hpp"

namespace edgetap::engine {

std::vector<Point2> support_grid_points(int side, int width, int height) {
  std::vector<Point2> points;
  points.reserve(static_cast<std::size_t>(side) * static_cast<std::size_t>(side));
  for (int row = 0; row < side; ++row) {
    for (int col = 0; col < side; ++col) {
      points.push_back({static_cast<float>(cell_centre(col, side, static_cast<double>(width))),
                        static_cast<float>(cell_centre(row, side, static_cast<double>(height)))});
    }
  }
  return points;
}

std::vector<Point2> grid_points(int count, int width, int height) {
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  std::vector<Point2> points = support_grid_points(side, width, height);
  points.resize(static_cast<std::size_t>(count));
  return points;
}

SupportGridSession::SupportGridSession(std::unique_ptr<TrackingSession> network, int side)
    : network_(std::move(network)), side_(side) {
  if (side < 1) throw std::invalid_argument("support grid side " + std::to_string(side) + " must be at least 1");
}

void SupportGridSession::warm_up(int width, int height, std::span<const int> batches) {
  std::vector<int> with_grid{side_ * side_};
  with_grid.insert(with_grid.end(), batches.begin(), batches.end());
  network_->warm_up(width, height, with_grid);
}

void SupportGridSession::encode_ahead(std::span<const ImageView> frames) {
  network_->encode_ahead(frames);
}

Status SupportGridSession::push_frame(const ImageView& frame) noexcept {
  Status status = network_->push_frame(frame);
  if (!status || network_->frames() != 1) return status;
  try {
    const std::vector<Point2> grid = support_grid_points(side_, frame.width, frame.height);
    support_ = network_->add_tracks(grid);
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::error(Status::Code::internal, std::string("support grid: ") + e.what());
  }
}

}  // namespace edgetap::engine
