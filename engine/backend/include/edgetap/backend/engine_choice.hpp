// Which engine runs the network: the CPU reference or the CUDA engine in FP32
// or FP16 storage (the plugin libedgetap-cuda.so, loaded at start-up where it
// is installed: cuda_plugin_loader.hpp). The one place that knows whether the
// CUDA engine is here: the daemon's trackers and edgetap-trace-run make their
// sessions here.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::backend {

enum class EngineKind { cpu, cuda_fp32, cuda_fp16 };

// "cpu", "cuda-fp32" or "cuda-fp16"; nullopt for anything else.
std::optional<EngineKind> engine_named(const std::string& name);
const char* to_string(EngineKind kind) noexcept;
// Whether the CUDA engine plugin is installed and loads (of this build).
bool have_cuda_engine() noexcept;
// The CUDA devices the engine can use, asked once per process through the
// plugin; without it, none, and the reason (the plugin absent, refused, or
// unable to load its CUDA libraries).
kernels::GpuProbe probe_gpus();
// Whether the network runs on a GPU: the plugin loaded and found a device.
bool network_on_gpu();

// How a session publishes its positions.
struct Publishing {
  // Template refinement after the network where the model's JSON declares it
  // (engine::RefinedSession; the alignments run beside the network: on the
  // CPU for the CPU engine, on the GPU, gpu::CudaTemplateAligner, for the CUDA
  // engines).
  bool refine = true;
  // The camera's override of the model's visible threshold: refinement aligns
  // the tracks published visible.
  std::optional<float> visible_threshold;
  // The side of the grid of support tracks (engine::SupportGridSession): the
  // camera's override of the model's support_grid; 0 = none.
  std::optional<int> support_grid;
};

// A fresh session over `network` (which must outlive it). Throws
// std::runtime_error when the engine is not in this build or the device
// cannot be set up, std::invalid_argument for iterations the model lacks.
std::unique_ptr<engine::TrackingSession> make_session(EngineKind kind, const engine::Network& network, int iters,
                                                      const Publishing& publishing = {});

}  // namespace edgetap::backend
