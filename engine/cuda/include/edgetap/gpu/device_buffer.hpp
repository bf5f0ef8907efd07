// Owning device and pinned-host arrays for the CUDA engine. Each is sized once
// (at start-up, or when a frame size or track capacity first appears) and then
// reused: the steady state allocates nothing. Device memory is stream-ordered
// (cudaMallocAsync/cudaFreeAsync on the owner's stream), so that growing or
// freeing it never waits for the device while another camera captures a graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cuda_fp16.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgetap/gpu/device_setup.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // `stream`: where the memory is allocated and freed (nullptr: the legacy
  // stream, for tests and single-threaded tools).
  DeviceBuffer(std::size_t count, cudaStream_t stream) { resize(count, stream); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), stream_(o.stream_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  // Reallocates only when `count` exceeds the capacity; the contents are not
  // kept. Stream-ordered (cudaMallocAsync on `stream`, the old memory freed on
  // the stream it came from): work enqueued on `stream` afterwards may use it.
  void resize(std::size_t count, cudaStream_t stream) {
    if (count <= count_) return;
    release();
    EDGETAP_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), stream));
    count_ = count;
    stream_ = stream;
  }
  // Like resize, but the first size() elements survive: copied on `stream`,
  // which must be the stream that uses the buffer; nothing waits for the device.
  void grow_keeping(std::size_t count, cudaStream_t stream) {
    if (count <= count_) return;
    DeviceBuffer bigger(count, stream);
    if (count_ > 0) {
      EDGETAP_CUDA_CHECK(cudaMemcpyAsync(bigger.ptr_, ptr_, bytes(), cudaMemcpyDeviceToDevice, stream));
    }
    *this = std::move(bigger);
  }
  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Page-locked host memory: what asynchronous copies need to overlap with work.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  // cudaMallocHost and cudaFreeHost may synchronize the device: set-up (device_setup.hpp).
  void resize(std::size_t count) {
    if (count <= count_) return;
    DeviceSetupSection setup;
    release();
    EDGETAP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
    count_ = count;
  }
  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }

 private:
  void release() noexcept {
    if (ptr_ == nullptr) return;
    DeviceSetupSection setup;
    cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Uploads host floats as T (weights: converted once at load), on `stream`,
// and waits for that stream only.
template <class T>
DeviceBuffer<T> to_device(const std::vector<float>& host, cudaStream_t stream) {
  std::vector<T> converted(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    if constexpr (std::is_same_v<T, __half>) {
      converted[i] = __float2half(host[i]);
    } else {
      converted[i] = host[i];
    }
  }
  DeviceBuffer<T> d(host.size(), stream);
  if (!host.empty()) {
    EDGETAP_CUDA_CHECK(
        cudaMemcpyAsync(d.data(), converted.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
    EDGETAP_CUDA_CHECK(cudaStreamSynchronize(stream));  // `converted` is freed on return
  }
  return d;
}

}  // namespace edgetap::gpu
