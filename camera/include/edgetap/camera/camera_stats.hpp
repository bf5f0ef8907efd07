// A camera's counters, as shown by `edgetap run`, the control socket and /metrics.
#pragma once

#include <array>
#include <ostream>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "edgetap/ladder/engine_info.hpp"

namespace edgetap::daemon {

// Upper bounds (ms) of the capture -> publish latency histogram buckets; the
// last bucket is everything above.
inline constexpr std::array<double, 10> kLatencyBucketsMs = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};

// Where a camera is: idle until its pipeline first runs; running; reconnecting (a live source
// waiting to restart its pipeline); ended (a file at its end); failed (a file that failed, or no
// tracker could be made); stopped (shut down).
enum class CameraState { idle, running, reconnecting, ended, failed, stopped };

inline const char* to_string(CameraState state) {
  switch (state) {
    case CameraState::idle: return "idle";
    case CameraState::running: return "running";
    case CameraState::reconnecting: return "reconnecting";
    case CameraState::ended: return "ended";
    case CameraState::failed: return "failed";
    case CameraState::stopped: return "stopped";
  }
  return "idle";
}

inline std::ostream& operator<<(std::ostream& out, CameraState state) { return out << to_string(state); }

struct CameraStats {
  std::string name;
  CameraState state = CameraState::idle;
  std::string error;              // the capture's last error, if any
  std::uint64_t frames_captured = 0;
  std::uint64_t frames_tracked = 0;
  std::uint64_t queue_drops = 0;
  std::uint64_t tracks_lost = 0;
  std::uint64_t reconnects = 0;   // pipeline restarts after an error, end or stall
  std::string rung;               // the degradation rung in force
  std::optional<pipeline::EngineInfo> engine;  // what runs that rung; none when the tracker could not be made
  std::vector<std::string> rungs_used;  // every rung in force so far, in the order first used
  int rung_index = 0;             // 0 = the best rung
  std::uint64_t rung_changes = 0;     // by the governor and by fail-overs
  std::uint64_t rung_failures = 0;    // rungs left because their tracker failed
  std::uint64_t frames_strided = 0;  // captured frames a rung's stride left untracked
  double latency_percentile_ms = 0;  // the governor's current percentile
  std::size_t points = 0;         // live tracks after the last frame
  double tracker_ms_mean = 0;
  double tracker_ms_sum = 0;
  double latency_ms_mean = 0;     // capture -> publish
  double latency_ms_sum = 0;
  double latency_ms_max = 0;
  std::array<std::uint64_t, kLatencyBucketsMs.size() + 1> latency_buckets{};  // counts per bucket
  double seconds = 0;             // since start
};

}  // namespace edgetap::daemon
