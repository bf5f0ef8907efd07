// What the edgetap tracker drives: the network streaming over one camera, on
// the CPU (engine::StreamingSession) or on a GPU (gpu::CudaStreamingSession).
// Both follow the same semantics (engine/STREAMING.md) and hand out the same
// track handles for the same calls.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgetap/image.hpp"
#include "edgetap/status.hpp"

namespace edgetap::engine {

struct TrackEstimate {
  float x = 0, y = 0;     // model-input pixels
  float visible = 0;      // probability
  float confidence = 0;   // probability
};

struct Point2 {
  float x = 0, y = 0;
};

class TrackingSession {
 public:
  virtual ~TrackingSession() = default;
  // Encodes `frame` and advances every track to it.
  virtual Status push_frame(const ImageView& frame) noexcept = 0;
  // Starts tracks at points of the last pushed frame; returns their handles.
  // Requires a pushed frame.
  virtual std::vector<int> add_tracks(std::span<const Point2> points) = 0;
  virtual void remove_track(int handle) = 0;
  virtual bool alive(int handle) const = 0;
  virtual const TrackEstimate& estimate(int handle) const = 0;
  // Frames pushed so far.
  virtual std::int64_t frames() const noexcept = 0;
  // Before the first frame: pays the set-up of a first frame in width x height
  // whose add_tracks calls add `batches` tracks, in that order (buffers sized,
  // plans made, graphs captured, each batch's query step run once), then forgets
  // every track and frame, so that the session behaves as a new one without a
  // new one's first-frame set-up. Only engines that keep such set-up (the CUDA
  // engine) do anything.
  virtual void warm_up(int /*width*/, int /*height*/, std::span<const int> /*batches*/) {}
  // A clip known in advance: the next push_frame calls will be given these
  // images, in this order, unchanged in memory until pushed. An engine that
  // encodes frames in batches (the CUDA engine) may encode them ahead; the
  // results are the same as without the call. A push_frame of another image
  // drops what is left of them. Set-up: not for a live camera's frame path.
  virtual void encode_ahead(std::span<const ImageView> /*frames*/) {}
};

}  // namespace edgetap::engine
