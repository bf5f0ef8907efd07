// The EdgeTAP network streaming over a camera on the GPU: the same semantics,
// handles and results as engine::StreamingSession (the CPU reference, which
// the parity tests compare it with), in storage precision T = float or __half.
//
// Everything a frame needs lives on the device, sized for a number of tracks
// (the capacity, which doubles when add_tracks needs more, keeping every
// track's state): the encoder's pyramid, each track's descriptors and
// key/value caches, the step's work buffers. The host sends the frame, the
// frame clock and the list of stepped tracks through pinned memory, and
// receives the estimates the same way: one synchronization per frame. With
// graphs on, a frame's whole work (copies, encoder, every iteration) is
// captured once per (frame size, number of tracks) and replayed as one CUDA
// graph launch; a new number of tracks captures at its first frame (the last
// four shapes stay captured).
//
// Several sessions (one per camera thread) share the process's CUDA context,
// each on its own stream with its own cuDNN and cuBLAS handles and
// workspaces. Captures use cudaStreamCaptureModeThreadLocal, so one camera's
// capture does not restrict the others' calls; building, growing and
// destroying a session (calls that are illegal while any stream captures)
// are serialized against captures by gpu/device_setup.hpp. Device memory is
// stream-ordered: nothing on a buffer's grow or free path waits for the device.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "edgetap/image.hpp"
#include "edgetap/status.hpp"

namespace edgetap::gpu {

template <class T>
class CudaStreamingSession final : public engine::TrackingSession {
 public:
  // `capacity`: tracks to make room for at start-up. `iters` as
  // engine::StreamingSession. Throws std::runtime_error when the device cannot
  // be set up, std::invalid_argument for iterations the model does not have.
  CudaStreamingSession(const engine::Network& network, int capacity = 256, int iters = 0);
  ~CudaStreamingSession();
  CudaStreamingSession(const CudaStreamingSession&) = delete;
  CudaStreamingSession& operator=(const CudaStreamingSession&) = delete;

  // Encodes `frame` and advances every track to it.
  Status push_frame(const ImageView& frame) noexcept override;
  // Starts tracks at points of the last pushed frame; returns their handles,
  // allocated as engine::StreamingSession allocates them. Throws
  // std::logic_error before a frame.
  std::vector<int> add_tracks(std::span<const engine::Point2> points) override;
  void remove_track(int handle) override;
  bool alive(int handle) const override;
  const engine::TrackEstimate& estimate(int handle) const override;
  std::int64_t frames() const noexcept override;
  int capacity() const noexcept;
  // A blank frame, each batch of tracks on a grid (its query step), two more
  // frames, then restart().
  void warm_up(int width, int height, std::span<const int> batches) override;
  // Encodes the frames in batches (frames_ahead.hpp) as their pushes reach them.
  void encode_ahead(std::span<const ImageView> frames) override;

  // Forgets every track and frame (the next handles start again as a new
  // session's) but keeps the device buffers, the encoder's plans and the
  // captured graphs: a new clip without a new session's set-up.
  void restart();
  // Replay each frame as one CUDA graph (default on).
  void set_graphs(bool on);
  // Time every stage with CUDA events (runs without graphs while on).
  void set_profiling(bool on);
  // The last frame's GPU milliseconds per stage, when profiling.
  const engine::StepProfile& last_profile() const noexcept;
  // Graph captures so far (each new frame size or number of tracks makes one).
  int graph_captures() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgetap::gpu
