// The frames a CUDA session was told it will be pushed next
// (TrackingSession::encode_ahead: a clip known in advance). They are encoded
// in batches, several frames in each cuDNN call, and each frame's step then
// takes its pyramid from the batch (CudaEncoder::take_batched) instead of
// encoding it: the frame's encoder kernels, launched once per frame in the
// per-frame graph, become one batch's launches for up to kMaxFrames frames.
// Results are push_frame's, up to the convolutions' summation order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>

#include "edgetap/gpu/cuda_encoder.hpp"
#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/image.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

template <class T>
class FramesAhead {
 public:
  // Frames in one batch, and the most device memory a batch's buffers take.
  static constexpr int kMaxFrames = 16;
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;

  FramesAhead(CudaEncoder<T>& encoder, cudaStream_t stream) : encoder_(encoder), stream_(stream) {}

  // Replaces the frames announced with `frames`, up to the first whose size
  // differs from the first's (a clip is one size). `size_multiple`: the sides
  // the network takes; frames of another size are not announced (push_frame
  // reports them). Set-up: makes the batch's buffers and program.
  void announce(std::span<const ImageView> frames, int size_multiple) {
    clear();
    if (frames.empty()) return;
    const ImageView& first = frames.front();
    if (first.empty() || first.width % size_multiple != 0 || first.height % size_multiple != 0) return;
    std::size_t n = 0;
    while (n < frames.size() && frames[n].width == first.width && frames[n].height == first.height) ++n;
    const std::size_t by_memory = std::max<std::size_t>(1, kMaxBytes / encoder_.frame_bytes(first.height, first.width));
    batch_ = static_cast<int>(std::min({n, by_memory, static_cast<std::size_t>(kMaxFrames)}));
    frame_bytes_ = first.packed_bytes();
    encoder_.prepare_batch(first.height, first.width, batch_);
    host_.resize(frame_bytes_ * batch_);
    device_.resize(frame_bytes_ * batch_, stream_);
    frames_.assign(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(n));
  }

  // Whether `frame` is the next frame announced (the same image in memory).
  // If so, enqueues its batch's encoding when that has not been done and
  // returns its index in the batch; else forgets every frame announced.
  std::optional<int> take(const ImageView& frame) {
    if (frames_.empty()) return std::nullopt;
    if (!same_image(frames_.front(), frame)) {
      clear();
      return std::nullopt;
    }
    if (encoded_ == 0) encode_next_batch();
    frames_.pop_front();
    --encoded_;
    return next_index_++;
  }

  void clear() {
    frames_.clear();
    encoded_ = 0;
  }

 private:
  static bool same_image(const ImageView& a, const ImageView& b) {
    return a.data == b.data && a.width == b.width && a.height == b.height && a.stride == b.stride;
  }

  // The next batch's frames into pinned memory (rows packed), then to the
  // device and through the encoder, on the session's stream. The previous
  // batch's copy is done: each frame's step is waited for before the next.
  void encode_next_batch() {
    const int n = static_cast<int>(std::min<std::size_t>(frames_.size(), static_cast<std::size_t>(batch_)));
    for (int i = 0; i < n; ++i) copy_rows_packed(frames_[static_cast<std::size_t>(i)], host_.data() + frame_bytes_ * i);
    const ImageView& first = frames_.front();
    EDGETAP_CUDA_CHECK(
        cudaMemcpyAsync(device_.data(), host_.data(), frame_bytes_ * n, cudaMemcpyHostToDevice, stream_));
    encoder_.encode_batch(device_.data(), n, first.height, first.width);
    encoded_ = n;
    next_index_ = 0;
  }

  CudaEncoder<T>& encoder_;
  cudaStream_t stream_;
  std::deque<ImageView> frames_;  // announced, not yet pushed
  int batch_ = 0;                 // frames in one batch
  int encoded_ = 0;               // of frames_' first, those the current batch holds
  int next_index_ = 0;            // frames_.front()'s index in the current batch
  std::size_t frame_bytes_ = 0;
  PinnedBuffer<std::uint8_t> host_;
  DeviceBuffer<std::uint8_t> device_;
};

}  // namespace edgetap::gpu
