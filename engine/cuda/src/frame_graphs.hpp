// The CUDA session's captured frames: a few graphs, each for one shape of frame
// (tracks stepped, height, width, encoded alone or in a batch), the oldest
// dropped past kHeld. A clip's frame without tracks and with them, a camera
// moving between two point counts: each stays captured. Dropped all at once
// when the buffers they address move.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

// What `enqueue()` launches on `stream`, captured (this thread's calls only)
// and instantiated. The capture ends cleanly when enqueue throws.
template <class Enqueue>
cudaGraphExec_t capture_graph(cudaStream_t stream, Enqueue&& enqueue) {
  cudaGraph_t graph = nullptr;
  EDGETAP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  EDGETAP_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  EDGETAP_CUDA_CHECK(made);
  return exec;
}

class FrameGraphs {
 public:
  // tracks stepped, frame height, frame width, whether the frame's pyramid comes from the encoder's batch
  using Shape = std::array<int, 4>;
  static constexpr std::size_t kHeld = 4;

  FrameGraphs() = default;
  FrameGraphs(const FrameGraphs&) = delete;
  FrameGraphs& operator=(const FrameGraphs&) = delete;
  ~FrameGraphs() {
    for (const Held& g : held_) cudaGraphExecDestroy(g.exec);
  }

  // The graph of `shape`, made by `capture()` (counted) when none is held.
  template <class Capture>
  cudaGraphExec_t get(const Shape& shape, Capture&& capture) {
    auto found = std::find_if(held_.begin(), held_.end(), [&](const Held& g) { return g.shape == shape; });
    if (found != held_.end()) return found->exec;
    if (held_.size() == kHeld) {
      EDGETAP_CUDA_CHECK(cudaGraphExecDestroy(held_.front().exec));
      held_.erase(held_.begin());
    }
    held_.push_back({shape, capture()});
    ++captures_;
    return held_.back().exec;
  }

  void clear() {
    for (const Held& g : held_) EDGETAP_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
    held_.clear();
  }

  int captures() const noexcept { return captures_; }

 private:
  struct Held {
    Shape shape;
    cudaGraphExec_t exec;
  };
  std::vector<Held> held_;
  int captures_ = 0;
};

}  // namespace edgetap::gpu
