// libedgetap-cuda.so: the CUDA engine behind backend/cuda_engine_plugin.hpp,
// the one symbol this plugin exports.
#include "edgetap/backend/cuda_engine_plugin.hpp"

#include <cuda_fp16.h>

#include "edgetap/gpu/cuda_session.hpp"
#include "edgetap/gpu/cuda_template_aligner.hpp"

namespace edgetap::gpu {
namespace {

std::unique_ptr<engine::TrackingSession> make_session(bool half, const engine::Network& network, int capacity,
                                                      int iters) {
  if (half) return std::make_unique<CudaStreamingSession<__half>>(network, capacity, iters);
  return std::make_unique<CudaStreamingSession<float>>(network, capacity, iters);
}

std::unique_ptr<engine::TemplateAligner> make_aligner(const engine::TemplateAlignmentConfig& config) {
  return std::make_unique<CudaTemplateAligner>(config);
}

const backend::CudaEnginePlugin kPlugin = [] {
  backend::CudaEnginePlugin p;
  p.abi = backend::kCudaPluginAbi;
  p.version = EDGETAP_VERSION;
  p.probe = &kernels::probe_gpus;
  p.make_session = &make_session;
  p.make_aligner = &make_aligner;
  return p;
}();

}  // namespace
}  // namespace edgetap::gpu

extern "C" __attribute__((visibility("default"))) const edgetap::backend::CudaEnginePlugin* edgetap_cuda_engine_plugin() {
  return &edgetap::gpu::kPlugin;
}
