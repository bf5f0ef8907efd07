#include <sstream>

#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::kernels {

std::string describe_backend_choice(const GpuProbe& probe) {
  std::ostringstream line;
  if (probe.devices.empty()) {
    line << "compute backend: cpu (" << probe.reason << ")";
    return line.str();
  }
  const GpuInfo& gpu = probe.devices.front();
  line << "compute backend: cuda (the edgetap network runs on GPU " << gpu.index << " '" << gpu.name << "' sm_"
       << gpu.compute_major << gpu.compute_minor << " (" << (gpu.memory_bytes >> 20)
       << " MiB; binary holds " << probe.compiled_architectures << "))";
  return line.str();
}

}  // namespace edgetap::kernels
