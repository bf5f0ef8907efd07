// A fault hook for the GPU failure path, for tests and the end-to-end run on a
// GPU host: with EDGETAP_INJECT_CUDA_FAULT=N in the environment, the first
// CUDA session of the process to reach its N-th frame fails there and at
// every frame after it, with an internal error, as a session does after a
// sticky CUDA error. Only that session (one camera's rung) fails; the others,
// and the rung the ladder falls back to, are not touched. Unset: no hook, and
// sessions are returned as they are.
#pragma once

#include <memory>

#include "edgetap/engine/tracking_session.hpp"

namespace edgetap::backend {

// The environment variable and the message of the injected failure.
inline constexpr const char* kInjectFaultVariable = "EDGETAP_INJECT_CUDA_FAULT";
inline constexpr const char* kInjectedFaultMessage = "injected CUDA fault (EDGETAP_INJECT_CUDA_FAULT)";

// `session` wrapped to fail as above when the hook is set and not yet spent.
std::unique_ptr<engine::TrackingSession> with_injected_fault(std::unique_ptr<engine::TrackingSession> session);

}  // namespace edgetap::backend
