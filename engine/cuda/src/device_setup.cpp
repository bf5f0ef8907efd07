#include "edgetap/gpu/device_setup.hpp"

#include <stdexcept>

namespace edgetap::gpu {

namespace {

// One per process, as the CUDA context the captures and the set-up share.
std::shared_mutex& setup_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

thread_local int setup_depth = 0;

}  // namespace

DeviceSetupSection::DeviceSetupSection() {
  if (setup_depth == 0) setup_mutex().lock();
  ++setup_depth;
}

DeviceSetupSection::~DeviceSetupSection() {
  if (--setup_depth == 0) setup_mutex().unlock();
}

CaptureSection::CaptureSection() {
  if (setup_depth != 0) throw std::logic_error("a graph capture inside device set-up would wait for itself");
  setup_mutex().lock_shared();
}

CaptureSection::~CaptureSection() { setup_mutex().unlock_shared(); }

bool in_device_setup() noexcept { return setup_depth != 0; }

}  // namespace edgetap::gpu
