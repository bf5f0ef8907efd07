// The process's first CUDA set-up (kernel modules, cuBLAS and cuDNN) paid
// before any camera captures: without it the first camera's first frame
// waits 320-390 ms (H200), longer than its queue lasts, and frames are
// dropped at every start (bench/NOTES-gpu.md, "Starts").
#pragma once

#include <memory>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/ladder/tracker_factory.hpp"

namespace edgetap::pipeline {

struct GpuWarmUp {
  // The rung's tracker, kept by the caller until the cameras have made theirs,
  // so that its network stays in the model cache and is not read again.
  std::unique_ptr<Tracker> tracker;
  double ms = -1;  // what it took; negative when nothing ran
};

// Where the network runs on a GPU, builds the first camera's first edgetap rung
// and tracks one point through one blank frame with it. Nothing runs without a
// GPU or an edgetap rung, or when the rung cannot be made (its camera reports that itself).
GpuWarmUp warm_up_gpu(const std::vector<config::CameraConfig>& cameras, ModelCache& models);

}  // namespace edgetap::pipeline
