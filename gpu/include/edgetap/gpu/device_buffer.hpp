// Owning device and pinned-host arrays for the CUDA engine. Each is sized once
// (at start-up, or when a frame size or track capacity first appears) and then
// reused: the steady state allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cuda_fp16.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { resize(count); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  // Reallocates only when `count` exceeds the capacity; the contents are not kept.
  void resize(std::size_t count) {
    if (count <= count_) return;
    release();
    EDGETAP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
    count_ = count;
  }
  // Like resize, but the first size() elements survive (synchronous copy: a
  // device-to-device cudaMemcpy may return before it is done, so the device is
  // waited for, and work on any stream afterwards sees the copied elements).
  void grow_keeping(std::size_t count) {
    if (count <= count_) return;
    DeviceBuffer bigger(count);
    if (count_ > 0) {
      EDGETAP_CUDA_CHECK(cudaMemcpy(bigger.ptr_, ptr_, bytes(), cudaMemcpyDeviceToDevice));
      EDGETAP_CUDA_CHECK(cudaDeviceSynchronize());
    }
    *this = std::move(bigger);
  }
  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory: what asynchronous copies need to overlap with work.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  void resize(std::size_t count) {
    if (count <= count_) return;
    release();
    EDGETAP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
    count_ = count;
  }
  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }

 private:
  void release() noexcept {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Uploads host floats as T (weights: converted once at load). Synchronous.
template <class T>
DeviceBuffer<T> to_device(const std::vector<float>& host) {
  std::vector<T> converted(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if constexpr (std::is_same_v<T, __half>) {
      converted[i] = __float2half(host[i]);
    } else {
      converted[i] = host[i];
    }
  }
  DeviceBuffer<T> d(host.size());
  if (!host.empty()) {
    EDGETAP_CUDA_CHECK(cudaMemcpy(d.data(), converted.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  return d;
}

}  // namespace edgetap::gpu
