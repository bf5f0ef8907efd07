#include "edgetap/backend/engine_choice.hpp"

#include <stdexcept>

#include "edgetap/engine/refined_session.hpp"
#include "edgetap/engine/support_grid_session.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

#ifdef EDGETAP_HAVE_GPU_ENGINE
#include "edgetap/gpu/cuda_session.hpp"
#include "edgetap/gpu/cuda_template_aligner.hpp"
#endif

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

bool have_cuda_engine() noexcept {
#ifdef EDGETAP_HAVE_GPU_ENGINE
  return true;
#else
  return false;
#endif
}

bool network_on_gpu() {
  static const bool usable = have_cuda_engine() && !kernels::probe_gpus().devices.empty();
  return usable;
}

namespace {

std::unique_ptr<engine::TrackingSession> network_session(EngineKind kind, const engine::Network& network, int iters) {
  switch (kind) {
    case EngineKind::cpu:
      return std::make_unique<engine::StreamingSession>(network, iters);
#ifdef EDGETAP_HAVE_GPU_ENGINE
    case EngineKind::cuda_fp32:
      return std::make_unique<gpu::CudaStreamingSession<float>>(network, 256, iters);
    case EngineKind::cuda_fp16:
      return std::make_unique<gpu::CudaStreamingSession<__half>>(network, 256, iters);
#else
    case EngineKind::cuda_fp32:
    case EngineKind::cuda_fp16:
      break;
#endif
  }
  throw std::runtime_error(std::string("engine ") + to_string(kind) +
                           ": this build has no CUDA engine (configure with EDGETAP_CUDA=ON where nvcc and "
                           "cuDNN are found; the core-only preset builds it on a GPU host)");
}

// Where the engine's published positions are aligned: beside its network.
std::unique_ptr<engine::TemplateAligner> aligner_for(EngineKind kind, const engine::TemplateAlignmentConfig& config) {
#ifdef EDGETAP_HAVE_GPU_ENGINE
  if (kind != EngineKind::cpu) return std::make_unique<gpu::CudaTemplateAligner>(config);
#endif
  (void)kind;
  return std::make_unique<engine::CpuTemplateAligner>(config);
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
