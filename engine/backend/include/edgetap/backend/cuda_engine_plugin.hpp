// The seam between the programs and the CUDA engine, which is a plugin:
// libedgetap-cuda.so (package edgetap-cuda; lib/edgetap/ of a build tree)
// exports one C function returning this table. The programs link no CUDA
// library: they load the plugin at start-up where it is installed, and one
// edgetap package serves CPU-only and GPU hosts alike. CUDA-free.
//
// The table passes C++ objects (sessions, the probe), so host and plugin must
// come from the same build of the project: the host refuses a plugin whose
// `abi` or `version` differs from its own.
#pragma once

#include <memory>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/engine/template_aligner.hpp"
#include "edgetap/engine/template_alignment.hpp"
#include "edgetap/engine/tracking_session.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::backend {

// Raised whenever the table's layout or meaning changes.
inline constexpr int kCudaPluginAbi = 2;
// The plugin's file name and the symbol it exports.
inline constexpr const char* kCudaPluginFile = "libedgetap-cuda.so";
inline constexpr const char* kCudaPluginEntry = "edgetap_cuda_engine_plugin";

struct CudaEnginePlugin {
  int abi = 0;                    // kCudaPluginAbi of the plugin's build
  const char* version = nullptr;  // the project version of the plugin's build
  // The CUDA devices the process can use (cudaGetDeviceCount and properties).
  kernels::GpuProbe (*probe)() = nullptr;
  // A CUDA session of the network in FP16 (`half`) or FP32 storage, room for
  // `capacity` tracks at first. Throws as gpu::CudaStreamingSession.
  std::unique_ptr<engine::TrackingSession> (*make_session)(bool half, const engine::Network& network, int capacity,
                                                           int iters) = nullptr;
  // The template aligner on the GPU (gpu::CudaTemplateAligner).
  std::unique_ptr<engine::TemplateAligner> (*make_aligner)(const engine::TemplateAlignmentConfig& config) = nullptr;
};

// The signature of kCudaPluginEntry.
using CudaEnginePluginEntry = const CudaEnginePlugin* (*)();

}  // namespace edgetap::backend
