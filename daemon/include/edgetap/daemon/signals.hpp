// Signals as events: the handler only writes the signal number into a pipe
// (async-signal-safe), and the main loop reads it from there. A signalfd
// would need the signals blocked in every thread, which libraries that start
// threads when loaded (OpenBLAS's pool) make impossible.
#pragma once

#include <chrono>
#include <initializer_list>

namespace edgetap::daemon {

class SignalWaiter {
 public:
  explicit SignalWaiter(std::initializer_list<int> signals);
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  // The next signal received within `timeout`, or 0.
  int wait(std::chrono::milliseconds timeout);
};

}  // namespace edgetap::daemon
