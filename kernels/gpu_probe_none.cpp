// The probe of a build without the CUDA backend.
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::kernels {

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe.reason = "this build has no CUDA backend (configured with EDGETAP_CUDA=OFF or no nvcc)";
  return probe;
}

}  // namespace edgetap::kernels
