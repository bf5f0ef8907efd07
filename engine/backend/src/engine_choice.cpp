#include "edgetap/backend/engine_choice.hpp"

#include <stdexcept>

#include "edgetap/backend/cuda_plugin_loader.hpp"
#include "edgetap/backend/fault_injection.hpp"
#include "edgetap/engine/refined_session.hpp"
#include "edgetap/engine/support_grid_session.hpp"

namespace edgetap::backend {

std::optional<EngineKind> engine_named(const std::string& name) {
  if (name == "cpu") return EngineKind::cpu;
  if (name == "cuda-fp32") return EngineKind::cuda_fp32;
  if (name == "cuda-fp16") return EngineKind::cuda_fp16;
  return std::nullopt;
}

const char* to_string(EngineKind kind) noexcept {
  switch (kind) {
    case EngineKind::cpu: return "cpu";
    case EngineKind::cuda_fp32: return "cuda-fp32";
    case EngineKind::cuda_fp16: return "cuda-fp16";
  }
  return "?";
}

bool have_cuda_engine() noexcept { return cuda_plugin().plugin != nullptr; }

kernels::GpuProbe probe_gpus() {
  static const kernels::GpuProbe probe = [] {
    const LoadedCudaPlugin& loaded = cuda_plugin();
    if (loaded.plugin != nullptr) return loaded.plugin->probe();
    kernels::GpuProbe none;
    none.reason = loaded.error;
    return none;
  }();
  return probe;
}

bool network_on_gpu() { return !probe_gpus().devices.empty(); }

namespace {

// Sessions start with room for this many tracks; they grow as tracks are added.
constexpr int kInitialTrackCapacity = 256;

const CudaEnginePlugin& cuda_engine(EngineKind kind) {
  const LoadedCudaPlugin& loaded = cuda_plugin();
  if (loaded.plugin == nullptr) throw std::runtime_error(std::string("engine ") + to_string(kind) + ": " + loaded.error);
  return *loaded.plugin;
}

std::unique_ptr<engine::TrackingSession> network_session(EngineKind kind, const engine::Network& network, int iters) {
  if (kind == EngineKind::cpu) return std::make_unique<engine::StreamingSession>(network, iters);
  return with_injected_fault(
      cuda_engine(kind).make_session(kind == EngineKind::cuda_fp16, network, kInitialTrackCapacity, iters));
}

// Where the engine's published positions are aligned: beside its network.
std::unique_ptr<engine::TemplateAligner> aligner_for(EngineKind kind, const engine::TemplateAlignmentConfig& config) {
  if (kind == EngineKind::cpu) return std::make_unique<engine::CpuTemplateAligner>(config);
  return cuda_engine(kind).make_aligner(config);
}

}  // namespace

std::unique_ptr<engine::TrackingSession> make_session(EngineKind kind, const engine::Network& network, int iters,
                                                      const Publishing& publishing) {
  auto session = network_session(kind, network, iters);
  const int support = publishing.support_grid.value_or(network.config.support_grid);
  if (support > 0) session = std::make_unique<engine::SupportGridSession>(std::move(session), support);
  if (!publishing.refine || !network.config.refinement) return session;
  engine::ModelConfig gate = network.config;
  if (publishing.visible_threshold) gate.visible_threshold = *publishing.visible_threshold;
  return std::make_unique<engine::RefinedSession>(std::move(session),
                                                  aligner_for(kind, *network.config.refinement), gate);
}

}  // namespace edgetap::backend
