// What the governors of one process's cameras tell each other. The cameras
// share the process's CPU and GPU, so one camera's rung change moves the load
// every other camera measures: a change anywhere makes the others' evidence
// stale (each starts its window again), two changes are at least
// kChangeSpacingS apart, and cameras that want to change take turns in the
// order they asked. Cameras over budget together then step one at a time,
// each step judged on fresh frames before the next, instead of all stepping
// at once and overshooting (16 cameras on one GPU did: each changed rung 3-6
// times in 30 s, bench/NOTES-gpu.md), and no camera steps twice while
// another waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace edgetap::pipeline {

class GovernorPeers {
 public:
  // A camera's place in the queue of those waiting to change (0: none).
  using Ticket = std::uint64_t;
  // Long enough to break ties between cameras that reach their verdicts
  // together; the fresh window each other camera then needs spaces the rest.
  static constexpr double kChangeSpacingS = 0.5;
  // A waiting camera that has not asked again for this long (its frames
  // stopped) loses its place, so that it cannot hold the others up.
  static constexpr double kTicketLifetimeS = 1.0;

  // Asks to change rung at `now_s` (steady clock seconds, any origin). true,
  // with the change counted and `ticket` spent, when no camera changed in
  // the last kChangeSpacingS and no camera that asked earlier still waits;
  // otherwise `ticket` holds the camera's place for its next ask.
  bool claim_change(Ticket& ticket, double now_s);
  // The camera no longer wants to change: gives its place up.
  void withdraw(Ticket& ticket);
  // How many changes were counted: a governor that last saw another number judges afresh.
  std::uint64_t changes() const noexcept { return changes_.load(std::memory_order_acquire); }

 private:
  std::mutex mutex_;
  double last_change_s_ = -1e300;
  Ticket next_ticket_ = 1;
  std::map<Ticket, double> waiting_;  // ticket -> when it last asked
  std::atomic<std::uint64_t> changes_{0};
};

}  // namespace edgetap::pipeline
