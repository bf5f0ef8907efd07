// The tracker seam: what every point tracker ("klt", later the EdgeTAP network)
// implements. Coordinates are pixels of the frames pushed (the model input size),
// pixel centres at integer coordinates.
//
// Time model: the tracker sees a stream of frames. Queries added between two
// pushes are located in the most recently pushed frame (before the first push:
// in the first frame) and are reported from the next push on.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgetap/image.hpp"
#include "edgetap/status.hpp"

namespace edgetap {

struct Query {
  std::string id;  // stable, unique among the tracker's live tracks
  float x = 0.f;
  float y = 0.f;
};

struct TrackPoint {
  std::string id;
  float x = 0.f;
  float y = 0.f;
  bool visible = false;     // the point is seen in this frame
  float confidence = 0.f;   // in [0, 1]: how much the tracker trusts (x, y)
  bool lost = false;        // the tracker gave the track up; it is not reported again
};

class Tracker {
 public:
  virtual ~Tracker() = default;
  virtual std::string_view name() const noexcept = 0;

  // Adds queries (see the time model above). A query whose id is already
  // tracked replaces that track.
  virtual void add_queries(std::span<const Query> queries) = 0;
  // Removes tracks by id; returns how many existed.
  virtual std::size_t remove_queries(std::span<const std::string> ids) = 0;
  // Number of live tracks.
  virtual std::size_t size() const noexcept = 0;
  // Most live tracks this tracker should be given (a rung's point cap).
  virtual std::size_t capacity() const noexcept { return static_cast<std::size_t>(-1); }

  // Tracks every live query into `frame`. `out` receives one entry per live
  // track (lost ones once, with lost = true, after which they are forgotten).
  virtual Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept = 0;
  // Before the first frame: pays the set-up of tracking `points` points in
  // width x height frames, leaving the tracker as it was made (no frame seen,
  // no track). Nothing to pay by default; the GPU engine's first frames with
  // tracks otherwise size buffers and capture graphs, set-up that runs one
  // camera at a time.
  virtual Status warm_up(int /*width*/, int /*height*/, std::size_t /*points*/) noexcept { return Status::ok(); }
  // The frames the next push_frame calls will be given, in that order and
  // unchanged in memory until pushed (an offline clip). A tracker may prepare
  // them ahead (the GPU engine encodes them in batches); results are the same
  // as without the call. Nothing by default.
  virtual void encode_ahead(std::span<const ImageView> /*frames*/) {}
};

}  // namespace edgetap
