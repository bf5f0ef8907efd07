// A stand-in for libedgetap-cuda.so that needs no GPU: the plugin table of
// backend/cuda_engine_plugin.hpp over the CPU engine, with one pretend device.
// It lets CI load a plugin through the same loader, across the same module
// boundary, as a GPU host does. Built three times: as it is, with another
// version (EDGETAP_STAND_IN_VERSION), and without its entry point
// (EDGETAP_STAND_IN_NO_ENTRY).
#include "edgetap/backend/cuda_engine_plugin.hpp"
#include "edgetap/engine/template_aligner.hpp"

namespace {

edgetap::kernels::GpuProbe probe() {
  edgetap::kernels::GpuProbe p;
  p.cuda_compiled = true;
  p.compiled_architectures = "stand-in";
  p.devices.push_back({0, "stand-in device (CPU engine)", 7, 5, std::size_t{16} << 30});
  return p;
}

std::unique_ptr<edgetap::engine::TrackingSession> make_session(bool, const edgetap::engine::Network& network, int,
                                                               int iters) {
  return std::make_unique<edgetap::engine::StreamingSession>(network, iters);
}

std::unique_ptr<edgetap::engine::TemplateAligner> make_aligner(const edgetap::engine::TemplateAlignmentConfig& config) {
  return std::make_unique<edgetap::engine::CpuTemplateAligner>(config);
}

const edgetap::backend::CudaEnginePlugin kPlugin = [] {
  edgetap::backend::CudaEnginePlugin p;
  p.abi = edgetap::backend::kCudaPluginAbi;
  p.version = EDGETAP_STAND_IN_VERSION;
  p.probe = &probe;
  p.make_session = &make_session;
  p.make_aligner = &make_aligner;
  return p;
}();

}  // namespace

#ifndef EDGETAP_STAND_IN_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const edgetap::backend::CudaEnginePlugin* edgetap_cuda_engine_plugin() {
  return &kPlugin;
}
#else
extern "C" __attribute__((visibility("default"))) int edgetap_something_else() { return kPlugin.abi; }
#endif
