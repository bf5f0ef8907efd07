// Shared by the GPU tests: skip cleanly where no CUDA device can be used, and
// copy between host vectors and device buffers.
#pragma once

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "edgetap/gpu/device_buffer.hpp"
#include "edgetap/kernels/gpu_probe.hpp"

namespace edgetap::gpu::testing {

// The tests' kernels and copies run on the legacy stream, one thread at a time.
inline constexpr cudaStream_t kLegacyStream = nullptr;

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

// A host array copied as it is (any trivially copyable U; at least one element is allocated).
template <class U>
DeviceBuffer<U> upload_raw(const std::vector<U>& host) {
  DeviceBuffer<U> d(std::max<std::size_t>(host.size(), 1), kLegacyStream);
  if (!host.empty()) {
    EDGETAP_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(U), cudaMemcpyHostToDevice));
  }
  return d;
}

// A device array copied back as it is (synchronizes).
template <class U>
std::vector<U> download_raw(const U* device, std::size_t count) {
  std::vector<U> host(count);
  EDGETAP_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(U), cudaMemcpyDeviceToHost));
  return host;
}

// Host floats -> device buffer of T.
template <class T>
DeviceBuffer<T> upload(const std::vector<float>& host) {
  std::vector<T> converted(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) converted[i] = from_float<T>(host[i]);
  return upload_raw(converted);
}

// Device array of T -> host floats (synchronizes).
template <class T>
std::vector<float> download(const T* device, std::size_t count) {
  const std::vector<T> raw = download_raw(device, count);
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = to_float(raw[i]);
  return out;
}

// A tolerance, or any value, by storage precision.
template <class T>
constexpr double for_precision(double fp32, double fp16) {
  return std::is_same_v<T, float> ? fp32 : fp16;
}

template <class T>
const char* precision_name() {
  return std::is_same_v<T, float> ? "fp32" : "fp16";
}

}  // namespace edgetap::gpu::testing
