// The probe of a build with the CUDA backend: asks the runtime for devices.
#include <cuda_runtime.h>

#include <string>

#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::kernels {

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe.cuda_compiled = true;
  probe.compiled_architectures = EDGETAP_CUDA_ARCHITECTURES;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    probe.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    probe.devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem});
  }
  if (probe.devices.empty()) probe.reason = "no CUDA device found";
  return probe;
}

}  // namespace edgetap::kernels
