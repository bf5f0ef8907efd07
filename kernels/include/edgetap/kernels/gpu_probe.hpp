// Finds the CUDA devices this process can use. CUDA-free header: without the
// CUDA backend compiled in, the probe reports that instead of failing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace edgetap::kernels {

struct GpuInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::size_t memory_bytes = 0;
};

struct GpuProbe {
  bool cuda_compiled = false;              // this build contains the CUDA backend
  std::string compiled_architectures;      // e.g. "75-real,86-real,...": what the binary holds
  std::vector<GpuInfo> devices;            // usable devices (empty when none)
  std::string reason;                      // why `devices` is empty, when it is
};

GpuProbe probe_gpus();

// One line for the log: which compute backend runs and why.
std::string describe_backend_choice(const GpuProbe& probe);

}  // namespace edgetap::kernels
