// Signals as events: the handler only writes the signal number into a pipe
// (async-signal-safe), and the main loop reads it from there. The signals are
// blocked in the thread that makes the waiter and in every thread started
// after it, and let through only while a thread waits in wait(), so that the
// handler runs on that thread. (A signalfd would need them blocked in every
// thread, which libraries that start threads when loaded, OpenBLAS's pool,
// make impossible; such a thread may still catch one, and its handler then
// writes to the same pipe.)
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
