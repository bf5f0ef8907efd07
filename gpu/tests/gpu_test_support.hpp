// Shared by the GPU tests: skip cleanly where no CUDA device can be used, and
// copy between host vectors and device buffers.
#pragma once

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::gpu::testing {

inline bool gpu_available() {
  static const bool available = !edgetap::kernels::probe_gpus().devices.empty();
  return available;
}

#define EDGETAP_REQUIRE_GPU()                                       \
  do {                                                              \
    if (!::edgetap::gpu::testing::gpu_available()) GTEST_SKIP() << "no usable CUDA device"; \
  } while (0)

// A file of the source tree. EDGETAP_SOURCE_DIR in the environment overrides
// the tree the tests were built in (a build carried to a GPU host).
inline std::string source_path(const std::string& relative) {
  const char* root = std::getenv("EDGETAP_SOURCE_DIR");
  return std::string(root != nullptr ? root : EDGETAP_SOURCE_DIR) + "/" + relative;
}

inline float to_float(float v) { return v; }
inline float to_float(__half v) { return __half2float(v); }
template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(v); else return v;
}

// Host floats -> device buffer of T.
template <class T>
DeviceBuffer<T> upload(const std::vector<float>& host) {
  std::vector<T> converted(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) converted[i] = from_float<T>(host[i]);
  DeviceBuffer<T> d(host.size());
  EDGETAP_CUDA_CHECK(cudaMemcpy(d.data(), converted.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Device array of T -> host floats (synchronizes).
template <class T>
std::vector<float> download(const T* device, std::size_t count) {
  std::vector<T> raw(count);
  EDGETAP_CUDA_CHECK(cudaMemcpy(raw.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = to_float(raw[i]);
  return out;
}

}  // namespace edgetap::gpu::testing
