// Set-up against graph capture, across the camera threads of one process.
//
// Every camera's CUDA session captures its frame into a graph on its own
// stream, in cudaStreamCaptureModeThreadLocal: the capturing thread may not
// make unsafe calls itself, and other threads are not restricted by the mode.
// But some calls are illegal, or break the capture, while ANY stream of the
// context is capturing, whichever thread makes them: what synchronizes the
// device (cudaDeviceSynchronize, cudaMalloc/cudaFree, cudaMallocHost/
// cudaFreeHost, handle creation and destruction inside cuDNN and cuBLAS) and a
// kernel's first launch in the process (lazy module loading). A session makes
// such calls only while it builds, prepares a frame size, adds tracks, grows
// a buffer or is destroyed: set-up. Set-up holds a DeviceSetupSection
// (exclusive); a capture holds a CaptureSection (shared: captures of several
// cameras run side by side). Frames that replay a captured graph hold neither.
#pragma once

#include <shared_mutex>

namespace edgetap::gpu {

// Exclusive against every capture. Re-entrant within a thread (a session's
// set-up that grows a buffer that takes the section itself).
class DeviceSetupSection {
 public:
  DeviceSetupSection();
  ~DeviceSetupSection();
  DeviceSetupSection(const DeviceSetupSection&) = delete;
  DeviceSetupSection& operator=(const DeviceSetupSection&) = delete;
};

// Shared with other captures, exclusive against set-up. Must not be taken by
// a thread inside a DeviceSetupSection (throws std::logic_error).
class CaptureSection {
 public:
  CaptureSection();
  ~CaptureSection();
  CaptureSection(const CaptureSection&) = delete;
  CaptureSection& operator=(const CaptureSection&) = delete;
};

// Whether this thread holds a DeviceSetupSection (for tests and assertions).
bool in_device_setup() noexcept;

}  // namespace edgetap::gpu
